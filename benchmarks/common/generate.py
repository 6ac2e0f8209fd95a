"""Realistic generated tools, for padding real catalogs to 10k and 100k tools.

Public catalogs stop at a few thousand tools, so the scale benchmarks pad them. Padding with random
strings would flatter any index (no shared vocabulary, trivially separable); instead every generated
tool is what a big enterprise catalog really holds: `<vendor>[_<region>]_<verb>_<object>` tools of
SaaS connectors (CRM, ticketing, storage, payments, ...), with a sentence-long description written from
templates over the verb, object, vendor and domain, and parameters that fit the verb (an id for `get`,
filters and paging for `list`, the object's fields for `create`). They share vocabulary with each
other and with the real tools ("create", "invoice", "user"), which is what makes search at scale hard.

Generation is deterministic: the n-th tool is the same on every machine and every run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["generated_tools"]

# domain -> (vendors, objects with their fields)
DOMAINS: dict[str, tuple[tuple[str, ...], dict[str, tuple[str, ...]]]] = {
    "crm": (("salesforce", "hubspot", "pipedrive", "zoho"), {
        "contact": ("email", "first_name", "last_name", "phone"), "lead": ("email", "company", "source"),
        "deal": ("title", "amount", "stage"), "account": ("name", "industry", "website"),
        "note": ("body", "contact_id"), "task": ("subject", "due_date", "owner_id")}),
    "ticketing": (("zendesk", "freshdesk", "jira_service", "servicenow"), {
        "ticket": ("subject", "description", "priority"), "comment": ("ticket_id", "body"),
        "agent": ("name", "email", "group"), "sla_policy": ("name", "response_hours"),
        "macro": ("title", "actions"), "satisfaction_rating": ("ticket_id", "score")}),
    "project": (("jira", "asana", "linear", "trello"), {
        "issue": ("title", "description", "assignee"), "project": ("name", "lead"),
        "sprint": ("name", "start_date", "end_date"), "board": ("name", "columns"),
        "label": ("name", "color"), "milestone": ("title", "due_date")}),
    "code": (("github", "gitlab", "bitbucket"), {
        "repository": ("name", "visibility", "description"), "pull_request": ("title", "head", "base"),
        "branch": ("name", "from_ref"), "release": ("tag", "notes"), "webhook": ("url", "events"),
        "workflow_run": ("workflow", "ref"), "commit_status": ("sha", "state")}),
    "storage": (("s3", "gcs", "azure_blob", "dropbox", "box"), {
        "bucket": ("name", "region"), "file": ("path", "content_type"), "folder": ("path",),
        "share_link": ("path", "expires_at"), "file_version": ("path", "version_id"),
        "lifecycle_rule": ("bucket", "days")}),
    "payments": (("stripe", "paypal", "adyen", "square"), {
        "payment": ("amount", "currency", "customer_id"), "refund": ("payment_id", "amount"),
        "customer": ("email", "name"), "subscription": ("customer_id", "plan_id"),
        "invoice": ("customer_id", "amount_due", "due_date"), "payout": ("amount", "destination"),
        "dispute": ("payment_id", "reason")}),
    "accounting": (("quickbooks", "xero", "netsuite"), {
        "invoice": ("customer", "lines", "due_date"), "bill": ("vendor", "amount"),
        "expense": ("amount", "category", "date"), "journal_entry": ("lines", "memo"),
        "vendor": ("name", "tax_id"), "tax_rate": ("name", "rate")}),
    "hr": (("workday", "bamboohr", "personio", "gusto"), {
        "employee": ("first_name", "last_name", "department"), "time_off_request": ("employee_id", "start_date", "end_date"),
        "payroll_run": ("period_start", "period_end"), "job_posting": ("title", "location"),
        "candidate": ("name", "email", "job_id"), "performance_review": ("employee_id", "period")}),
    "messaging": (("slack", "teams", "discord", "mattermost"), {
        "message": ("channel", "text"), "channel": ("name", "is_private"), "user_group": ("name", "members"),
        "reaction": ("message_id", "emoji"), "reminder": ("text", "time"), "bookmark": ("channel", "url")}),
    "email": (("gmail", "outlook", "sendgrid", "mailchimp"), {
        "email": ("to", "subject", "body"), "draft": ("to", "subject", "body"), "mailing_list": ("name",),
        "campaign": ("subject", "list_id", "send_at"), "template": ("name", "html"),
        "email_filter": ("criteria", "action")}),
    "calendar": (("google_calendar", "outlook_calendar", "calendly"), {
        "event": ("title", "start", "end", "attendees"), "calendar": ("name", "time_zone"),
        "availability": ("user", "start", "end"), "booking": ("event_type", "invitee_email"),
        "room": ("name", "capacity")}),
    "ecommerce": (("shopify", "woocommerce", "bigcommerce", "magento"), {
        "product": ("title", "price", "sku"), "order": ("customer_id", "line_items"),
        "inventory_level": ("sku", "location_id", "quantity"), "discount_code": ("code", "percent_off"),
        "fulfillment": ("order_id", "tracking_number"), "cart": ("customer_id",),
        "collection": ("title", "rules")}),
    "cloud": (("aws_ec2", "gcp_compute", "azure_vm", "digitalocean"), {
        "instance": ("name", "machine_type", "zone"), "snapshot": ("volume_id", "description"),
        "volume": ("size_gb", "zone"), "security_group": ("name", "rules"),
        "load_balancer": ("name", "targets"), "ssh_key": ("name", "public_key")}),
    "monitoring": (("datadog", "new_relic", "grafana", "pagerduty"), {
        "alert": ("name", "query", "threshold"), "dashboard": ("title", "widgets"),
        "incident": ("title", "severity"), "on_call_schedule": ("name", "rotation"),
        "metric": ("name", "tags"), "log_query": ("query", "time_range")}),
    "database": (("postgres", "mongodb_atlas", "snowflake", "bigquery"), {
        "table": ("name", "schema"), "query": ("sql",), "backup": ("database", "retention_days"),
        "database_user": ("username", "role"), "dataset": ("name", "location"),
        "scheduled_query": ("sql", "schedule")}),
    "marketing": (("google_ads", "meta_ads", "linkedin_ads"), {
        "ad_campaign": ("name", "budget", "objective"), "ad_group": ("campaign_id", "bid"),
        "audience": ("name", "criteria"), "creative": ("headline", "image_url"),
        "conversion_action": ("name", "value")}),
    "analytics": (("google_analytics", "mixpanel", "amplitude", "segment"), {
        "report": ("metrics", "dimensions", "date_range"), "funnel": ("steps",),
        "cohort": ("name", "definition"), "event_definition": ("name", "properties"),
        "user_profile": ("user_id", "traits")}),
    "docs": (("notion", "confluence", "google_docs", "coda"), {
        "page": ("title", "parent_id", "content"), "database_row": ("database_id", "properties"),
        "space": ("key", "name"), "document": ("title", "body"), "page_comment": ("page_id", "text")}),
    "logistics": (("fedex", "ups", "dhl", "shippo"), {
        "shipment": ("from_address", "to_address", "weight_kg"), "shipping_label": ("shipment_id", "format"),
        "pickup": ("address", "date"), "rate_quote": ("from_postcode", "to_postcode", "weight_kg"),
        "tracking_event": ("tracking_number",)}),
    "identity": (("okta", "auth0", "azure_ad"), {
        "user": ("email", "login"), "group": ("name", "description"), "application": ("name", "sign_on_mode"),
        "role_assignment": ("user_id", "role"), "mfa_factor": ("user_id", "factor_type")}),
    "travel": (("amadeus", "booking_com", "expedia"), {
        "flight_offer": ("origin", "destination", "departure_date"), "hotel_booking": ("hotel_id", "check_in", "check_out"),
        "car_rental": ("pickup_location", "pickup_date"), "itinerary": ("traveler_id",),
        "loyalty_account": ("program", "member_id")}),
    "sms": (("twilio", "vonage", "messagebird"), {
        "sms": ("to", "body"), "phone_number": ("country", "area_code"), "call": ("to", "from_number"),
        "verification": ("to", "channel"), "recording": ("call_sid",)}),
}

# verb -> (description phrase, kind of parameters)
VERBS: dict[str, tuple[str, str]] = {
    "get": ("Get one {object} by its id from {vendor}", "id"),
    "list": ("List {objects} in {vendor}, with filters and paging", "list"),
    "search": ("Search {objects} in {vendor} by a free-text query", "search"),
    "create": ("Create a new {object} in {vendor}", "fields"),
    "update": ("Update the fields of an existing {object} in {vendor}", "id_fields"),
    "delete": ("Delete a {object} from {vendor} permanently", "id"),
    "archive": ("Archive a {object} in {vendor} so it is hidden but can be restored", "id"),
    "restore": ("Restore an archived or deleted {object} in {vendor}", "id"),
    "export": ("Export {objects} from {vendor} to a CSV or JSON file", "export"),
    "import": ("Import {objects} into {vendor} from a CSV or JSON file", "import"),
    "count": ("Count the {objects} in {vendor} that match a filter", "list"),
    "assign": ("Assign a {object} in {vendor} to a user or team", "assign"),
    "tag": ("Add tags or labels to a {object} in {vendor}", "tags"),
    "duplicate": ("Make a copy of a {object} in {vendor}", "id"),
    "share": ("Share a {object} in {vendor} with other users", "share"),
    "watch": ("Subscribe to change notifications for a {object} in {vendor}", "id"),
    "validate": ("Check that a {object} in {vendor} is valid before saving it", "fields"),
    "sync": ("Synchronise {objects} between {vendor} and another system", "sync"),
    "merge": ("Merge two duplicate {objects} in {vendor} into one", "merge"),
    "get_history": ("Get the change history of a {object} in {vendor}", "id"),
}
REGIONS: tuple[str, ...] = ("", "eu", "us", "apac", "sandbox", "uk", "ca", "au", "de", "jp", "br", "in")
_REGION_TEXT = {"eu": "the EU data region", "us": "the US data region", "apac": "the APAC data region",
                "sandbox": "the sandbox (test) account", "uk": "the UK data region",
                "ca": "the Canada data region", "au": "the Australia data region",
                "de": "the Germany data region", "jp": "the Japan data region",
                "br": "the Brazil data region", "in": "the India data region"}


def _plural(word: str) -> str:
    if word.endswith(("s", "sh", "ch", "x")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _parameters(kind: str, obj: str, fields: tuple[str, ...]) -> dict[str, Any]:
    noun = obj.replace("_", " ")
    props: dict[str, Any] = {}
    required: list[str] = []
    if kind in ("id", "id_fields", "assign", "tags", "share"):
        props[f"{obj}_id"] = _string(f"The id of the {noun}.")
        required.append(f"{obj}_id")
    if kind in ("fields", "id_fields"):
        for field in fields:
            props[field] = _string(f"The {field.replace('_', ' ')} of the {noun}.")
        if kind == "fields":
            required.extend(fields[:1])
    if kind in ("list", "export"):
        props["filter"] = _string(f"Filter expression on the {noun} fields, e.g. '{fields[0]}:value'.")
        props["limit"] = {"type": "integer", "description": "Maximum number of results.", "default": 50}
        props["cursor"] = _string("Paging cursor returned by the previous call.")
    if kind == "search":
        props["query"] = _string(f"Words to look for in the {noun}.")
        props["limit"] = {"type": "integer", "description": "Maximum number of results.", "default": 20}
        required.append("query")
    if kind == "export":
        props["format"] = {"type": "string", "enum": ["csv", "json"], "description": "File format."}
    if kind == "import":
        props["file_url"] = _string("URL or path of the file to import.")
        props["dry_run"] = {"type": "boolean", "description": "Validate only, do not write.", "default": False}
        required.append("file_url")
    if kind == "assign":
        props["assignee"] = _string("User id or team name to assign to.")
        required.append("assignee")
    if kind == "tags":
        props["tags"] = {"type": "array", "items": {"type": "string"}, "description": "Tags to add."}
        required.append("tags")
    if kind == "share":
        props["emails"] = {"type": "array", "items": {"type": "string"}, "description": "People to share with."}
        props["permission"] = {"type": "string", "enum": ["view", "comment", "edit"]}
        required.append("emails")
    if kind == "sync":
        props["target"] = _string("The other system to synchronise with.")
        props["since"] = _string("Only changes after this ISO 8601 time.")
        required.append("target")
    if kind == "merge":
        props["primary_id"] = _string(f"The {noun} to keep.")
        props["duplicate_id"] = _string(f"The {noun} merged into the primary one.")
        required.extend(["primary_id", "duplicate_id"])
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def _combinations() -> Iterator[tuple[str, str, str, str, tuple[str, ...], str]]:
    """(region, domain, vendor, object, fields, verb) in a fixed order that spreads over domains early."""
    rows = [
        (domain, vendor, obj, fields, verb)
        for domain, (vendors, objects) in DOMAINS.items()
        for obj, fields in objects.items()
        for verb in VERBS
        for vendor in vendors
    ]
    # Interleave (stride) so the first thousand tools already cover every domain and verb.
    stride = 7919  # a prime larger than any domain block: a permutation of the rows
    order = [(i * stride) % len(rows) for i in range(len(rows))] if len(rows) % stride else range(len(rows))
    for region in REGIONS:
        for i in order:
            yield (region, *rows[i])


def generated_tools(count: int, *, skip: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """`count` tools as tools.jsonl rows (name, description, parameters, skill); names in `skip` are
    avoided so padding never collides with the real tools it is mixed with."""
    out: list[dict[str, Any]] = []
    for region, domain, vendor, obj, fields, verb in _combinations():
        if len(out) == count:
            break
        prefix = f"{vendor}_{region}" if region else vendor
        name = f"{prefix}_{verb}_{obj}"[:64]
        if name in skip:
            continue
        phrase, kind = VERBS[verb]
        vendor_text = vendor.replace("_", " ").title()
        text = phrase.format(object=obj.replace("_", " "), objects=_plural(obj).replace("_", " "),
                             vendor=vendor_text)
        where = f" Uses {_REGION_TEXT[region]}." if region else ""
        description = f"{text} ({domain.upper() if len(domain) <= 3 else domain} connector).{where}"
        out.append({
            "name": name,
            "description": description,
            "parameters": _parameters(kind, obj, fields),
            "skill": f"{prefix}_{domain}",
        })
    if len(out) < count:
        raise ValueError(f"the generator can make at most {len(out)} distinct tools, {count} were asked for")
    return out
