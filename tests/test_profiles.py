"""Profiles: files validated with file/line/field problems, `permits`, and the places that enforce it
(Searcher filters before ranking, Executor refuses calls like unknown tools)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsearch import ConfigError, Searcher, Skill, Tool
from toolsearch.profiles import NOTHING, Profile, load_profile, load_profiles
from toolsearch.runtime.executor import Executor


def _echo(text: str) -> str:
    return f"echo {text}"


def _skill(name: str, tags: list[str], tools: list[tuple[str, str]]) -> Skill:
    return Skill(name=name, description=name, tags=tags, tools=[
        Tool(name=n, description=d, handler=_echo,
             input_schema={"type": "object", "properties": {"text": {"type": "string"}}}) for n, d in tools])


@pytest.fixture()
def skills() -> list[Skill]:
    return [
        _skill("mail", ["messaging"], [("send_email", "send an email message"), ("read_inbox", "read the email inbox")]),
        _skill("files", ["storage"], [("read_file", "read a text file"), ("write_file", "write a text file")]),
        _skill("billing", ["finance"], [("refund_payment", "refund a customer payment")]),
    ]


def _write(tmp_path: Path, text: str, name: str = "profile.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_one_profile_file_permits_skills_tags_and_tools(tmp_path: Path, skills: list[Skill]) -> None:
    searcher = Searcher(skills)
    path = _write(tmp_path, "name: support\nskills: [mail]\ntags: [storage]\ntools: [refund_payment]\n")
    profile = load_profile(path, catalog=searcher.catalog)
    assert profile.name == "support"
    assert profile.visible(searcher.catalog) == ("send_email", "read_inbox", "read_file", "write_file",
                                                 "refund_payment")
    only_mail = Profile("m", skills=frozenset({"mail"}))
    assert [t.name for t in searcher.catalog if only_mail.permits(t)] == ["send_email", "read_inbox"]


def test_search_with_a_profile_never_returns_other_tools(skills: list[Skill]) -> None:
    searcher = Searcher(skills)
    files_only = Profile("files", skills=frozenset({"files"}))
    assert [h.name for h in searcher.search("read", 5, allow=files_only)] == ["read_file"]
    assert searcher.search("refund a customer payment", 5, allow=files_only) == []  # not even a hint
    assert searcher.search("refund_payment", 5, allow=files_only.permits) == []


def test_executor_refuses_calls_outside_the_profile_like_unknown_tools(skills: list[Skill]) -> None:
    with Executor(skills, profile=Profile("mail", skills=frozenset({"mail"}))) as executor:
        assert executor.run("send_email", {"text": "hi"}).text == "echo hi"
        refused = executor.run("refund_payment", {"text": "x"})
        assert refused.is_error and refused.error_kind == "not_found"
        near = executor.run("read_fil", {"text": "x"})  # close to read_file, which is out of profile
        assert "read_file" not in near.text
    with pytest.raises(ConfigError, match="permits"):
        Executor(skills, profile="mail")


def test_several_profiles_chosen_by_header(tmp_path: Path, skills: list[Skill]) -> None:
    catalog = Searcher(skills).catalog
    path = _write(tmp_path, "header: X-Tenant\ndefault: public\nprofiles:\n  public: {skills: [files]}\n"
                            "  finance: {tags: [finance]}\n")
    loaded = load_profiles(path, catalog=catalog)
    assert loaded.problems == ()
    chosen = loaded.profiles
    assert chosen.choose({"x-tenant": "finance"}).visible(catalog) == ("refund_payment",)
    assert chosen.choose({}).name == "public"            # no header: the default
    assert chosen.choose(None).name == "public"
    assert chosen.choose({"X-Tenant": "nobody"}) is NOTHING  # unknown value: nothing, not the default


def test_unknown_names_are_problems_with_lines_not_crashes(tmp_path: Path, skills: list[Skill]) -> None:
    catalog = Searcher(skills).catalog
    path = _write(tmp_path, "header: X-Tenant\nprofiles:\n  a:\n    skills: [mail, mial]\n"
                            "  b: {skills: [files], colour: red}\ndefault: c\n")
    loaded = load_profiles(path, catalog=catalog)
    text = [str(p) for p in loaded.problems]
    assert any("unknown skill 'mial'" in t and ":4:" in t and "did you mean 'mail'" in t for t in text), text
    assert any("unknown field 'colour'" in t for t in text)
    assert any("default profile 'c' is not defined" in t for t in text)
    assert loaded.profiles.profiles["a"].skills == frozenset({"mail"})  # the rest of it still works
    with pytest.raises(Exception, match="mial"):
        load_profile(path, catalog=catalog)


@pytest.mark.parametrize("text, message", [
    ("skills: [mail\n", "malformed YAML"),
    ("- mail\n", "one mapping"),
    ("skills: {a: 1}\n", "list of names"),
    ("name: empty\n", "permits nothing"),
    ("skills: " + "[" * 100 + "]" * 100 + "\n", "deep"),  # bounded like skill files (safe_yaml)
])
def test_bad_files_give_problems(tmp_path: Path, text: str, message: str) -> None:
    loaded = load_profiles(_write(tmp_path, text))
    assert any(message in str(p) for p in loaded.problems), loaded.problems


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such profile file"):
        load_profiles(tmp_path / "nope.yaml")


def test_wrap_with_a_profile_finds_and_runs_only_permitted_tools(skills: list[Skill]) -> None:
    import toolsearch
    from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search

    searcher = Searcher(skills)
    profile = Profile("mail", skills=frozenset({"mail"}))
    script = [reply(None, search("refund a customer payment")),
              reply(None, call("refund_payment", {"text": "order 7"})),
              reply("done")]
    with FakeModelServer(ScriptedModel(script)) as server, Executor(skills) as executor:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor, profile=profile)
        agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "refund order 7"}])
        sent = server.requests
    # The refund tool never reaches a request, and the guessed call is refused, not run.
    assert all("refund_payment" not in [t["function"]["name"] for t in r.get("tools", [])] for r in sent)
    answers = [m["content"] for m in sent[-1]["messages"] if m["role"] == "tool"]
    assert answers[0].startswith("No matching tools")  # not even a hint that it exists
    assert "no tool named 'refund_payment'" in answers[1] and "echo order 7" not in answers[1]  # as if unknown
