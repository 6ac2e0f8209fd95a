"""`toolsearch search` says why a request got no tool in one plain sentence; `--explain` names the knobs."""

from __future__ import annotations

from test_no_match import files


def test_toolsearch_search_says_why_in_one_plain_sentence_and_explain_names_the_knobs(tmp_path, capsys):
    import json

    from toolsearch.cli import main

    catalog = tmp_path / "tools.jsonl"
    catalog.write_text("".join(json.dumps({"name": t.name, "description": t.description}) + "\n"
                               for t in files()[0].tools))
    base = ["search", "--catalog", str(catalog), "--index", str(tmp_path / "ix")]
    assert main([*base, "tell", "me", "a", "joke"]) == 0
    plain = capsys.readouterr().err.strip()
    assert plain == "no good match: no tool shares a meaningful word with the request"
    assert main([*base, "--explain", "tell", "me", "a", "joke"]) == 0
    assert "no_match balanced" in capsys.readouterr().err
    # strict refuses a request sharing one word of four; the sentence has no knob name, --explain has
    request = ["quantum", "entanglement", "of", "kittens", "in", "a", "file"]
    assert main([*base, "-k", "2", *request]) == 0 and "read_file" in capsys.readouterr().out
    assert main([*base, "--no-match", "strict", *request]) == 0
    err = capsys.readouterr().err
    assert err.startswith("no good match: the tools share too little of the request") and "min_" not in err
    assert main([*base, "--no-match", "strict", "--explain", *request]) == 0
    assert "min_coverage" in capsys.readouterr().err


def test_repaired_schema_slips_do_not_claim_that_skills_were_left_out(tmp_path, capsys):
    import json

    from toolsearch.cli import main

    catalog = tmp_path / "tools.jsonl"
    catalog.write_text(json.dumps({"name": "list_orders", "description": "List orders", "parameters": {
        "type": "object", "properties": {"limit": {"type": "integer", "maximum": "250"}}}}) + "\n")
    assert main(["search", "--catalog", str(catalog), "--index", str(tmp_path / "ix"), "orders"]) == 0
    captured = capsys.readouterr()
    assert "list_orders" in captured.out and "left out" not in captured.err
