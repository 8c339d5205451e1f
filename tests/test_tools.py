"""Tests for the tools package: world model, specs, toolbox and action log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from tools import (
    SIDE_EFFECTING,
    TOOL_SPECS,
    ActionLog,
    Invitation,
    Product,
    Toolbox,
    ToolCall,
    World,
    args_match,
    default_world,
    load_world,
    openai_tools,
    save_world,
)

YAML_WORLD = """
invitations:
  - {id: inv-kevin, from: Kevin, event: birthday drinks, when: 2026-06-12T20:00}
  - {id: inv-lena, from: Lena, event: gallery walk, when: 2026-06-14}
calendar:
  busy:
    - {start: 2026-06-12T18:00, end: 2026-06-12T19:00, title: yoga}
products:
  - {id: p-book-pb, title: The Overstory (paperback), price: 14.5, attributes: {format: paperback}}
  - {id: p-book-hc, title: The Overstory (hardcover), price: 29, currency: EUR,
     attributes: {format: hardcover, tags: [novel, trees]}}
documents:
  - {id: d-cv, title: Resume, body: Ten years of illustration work.}
inbox:
  - {id: m-1, from: marta@example.org, subject: Address, body: 412 Alder Street}
contacts:
  - {name: Marta Lopez, email: marta@example.org, relation: painting-class friend}
  - {name: Kevin Wu, email: kevin@example.com, relation: coworker at the print shop}
"""


def sample_world() -> World:
    return World.model_validate(
        {
            "invitations": [
                {
                    "id": "inv-kevin",
                    "from": "Kevin",
                    "event": "birthday drinks",
                    "when": "2027-02-05T20:00",
                },
                {
                    "id": "inv-lena",
                    "from": "Lena",
                    "event": "gallery walk",
                    "when": "2027-02-07T15:00",
                },
            ],
            "calendar": {
                "busy": [
                    {"start": "2027-02-05T18:00", "end": "2027-02-05T19:00", "title": "Yoga"},
                    {"start": "2027-02-10", "end": "2027-02-10", "title": "Conference"},
                ]
            },
            "products": [
                {
                    "id": "p-mug",
                    "title": "Stoneware mug",
                    "price": 12.0,
                    "attributes": {"color": "blue"},
                },
                {
                    "id": "p-book-pb",
                    "title": "The Overstory",
                    "price": 14.5,
                    "attributes": {"format": "paperback", "author": "Richard Powers"},
                },
                {
                    "id": "p-book-hc",
                    "title": "The Overstory",
                    "price": 29.0,
                    "attributes": {"format": "hardcover", "author": "Richard Powers"},
                },
                {"id": "p-lights", "title": "Bike lights", "price": 39.95, "attributes": {}},
            ],
            "documents": [
                {"id": "d-cv", "title": "Resume", "body": "Ten years of illustration work."},
                {"id": "d-invoice", "title": "March invoice", "body": "Invoice for print orders."},
            ],
            "inbox": [
                {
                    "id": "m-1",
                    "from": "marta@example.org",
                    "subject": "Address",
                    "body": "412 Alder",
                },
            ],
            "contacts": [
                {
                    "name": "Marta Lopez",
                    "email": "marta@example.org",
                    "relation": "painting-class friend",
                },
                {"name": "Kevin Wu", "email": "kevin@example.com", "relation": "coworker"},
                {"name": "Kevin Ames", "email": "kames@example.net", "relation": "neighbor"},
            ],
        }
    )


@pytest.fixture
def box() -> Toolbox:
    return Toolbox(sample_world(), ActionLog())


def run(box: Toolbox, name: str, args: Any = None) -> tuple[bool, Any]:
    result = box.run(ToolCall(id="call-1", name=name, args=args if args is not None else {}))
    assert result.call_id == "call-1"
    assert result.name == name
    return result.ok, json.loads(result.content)


# world


def test_world_json_round_trip(tmp_path: Path) -> None:
    world = sample_world()
    path = tmp_path / "nested" / "world.json"
    save_world(world, path)
    raw = json.loads(path.read_text())
    assert raw["invitations"][0]["from"] == "Kevin"
    assert "from_" not in path.read_text()
    assert load_world(path) == world
    assert [p.name for p in path.parent.iterdir()] == ["world.json"]  # no temp file left


def test_world_yaml_form_round_trip() -> None:
    data = yaml.safe_load(YAML_WORLD)
    world = World.model_validate(data)
    assert world.invitations[0].from_ == "Kevin"
    assert world.invitations[1].when == "2026-06-14"  # YAML date object back to text
    assert world.products[1].currency == "EUR"
    assert world.products[0].currency == "USD"
    dumped = world.model_dump(by_alias=True)
    assert dumped["invitations"][0] == {
        "id": "inv-kevin",
        "from": "Kevin",
        "event": "birthday drinks",
        "when": "2026-06-12T20:00",
    }
    assert dumped["inbox"][0]["from"] == "marta@example.org"
    assert World.model_validate(dumped) == world
    assert World.model_validate(json.loads(json.dumps(dumped))) == world


def test_world_defaults_and_population_by_name() -> None:
    empty = World()
    assert empty.model_dump(by_alias=True) == {
        "invitations": [],
        "calendar": {"busy": []},
        "products": [],
        "documents": [],
        "inbox": [],
        "contacts": [],
    }
    inv = Invitation(id="i", from_="Ana", event="dinner", when="2027-01-01T19:00")
    assert inv.model_dump(by_alias=True)["from"] == "Ana"


def test_world_rejects_unknown_fields_and_duplicate_ids() -> None:
    with pytest.raises(ValidationError) as exc:
        World.model_validate(
            {"invitations": [{"id": "i", "from": "A", "event": "e", "when": "w", "x": 1}]}
        )
    assert "x" in str(exc.value) and "Extra inputs" in str(exc.value)
    with pytest.raises(ValidationError, match="weather"):
        World.model_validate({"weather": []})
    with pytest.raises(ValidationError, match="duplicate id 'p'"):
        World.model_validate(
            {
                "products": [
                    {"id": "p", "title": "a", "price": 1},
                    {"id": "p", "title": "b", "price": 2},
                ]
            }
        )


def test_world_helpers() -> None:
    world = sample_world()
    assert world.invitation("inv-lena") is not None
    assert world.invitation("nope") is None
    product = world.product("p-book-hc")
    assert product is not None and product.price == 29.0
    document = world.document("d-cv")
    assert document is not None and document.title == "Resume"
    contact = world.contact_by_email("MARTA@example.org")
    assert contact is not None and contact.name == "Marta Lopez"
    assert world.contact_by_email("nobody@example.org") is None
    assert world.ids() == {
        "inv-kevin",
        "inv-lena",
        "p-mug",
        "p-book-pb",
        "p-book-hc",
        "p-lights",
        "d-cv",
        "d-invoice",
        "m-1",
    }


def test_default_world() -> None:
    world = default_world()
    assert 3 <= len(world.invitations) <= 4
    assert len({i.from_ for i in world.invitations}) == len(world.invitations)
    assert len(world.calendar.busy) >= 2
    assert 5 <= len(world.products) <= 6
    assert len(world.documents) == 3
    assert 2 <= len(world.inbox) <= 3
    assert 4 <= len(world.contacts) <= 5
    assert all(i.when.startswith("2027-") for i in world.invitations)
    relations = " ".join(c.relation for c in world.contacts)
    assert "coworker" in relations and "friend" in relations
    authors = [p.attributes.get("author") for p in world.products if p.attributes.get("author")]
    assert len(authors) == 2 and len(set(authors)) == 1
    assert default_world() is not world and default_world() == world


# read-only tools


def test_list_invitations_and_read_inbox(box: Toolbox) -> None:
    ok, data = run(box, "list_invitations")
    assert ok
    assert [i["id"] for i in data["invitations"]] == ["inv-kevin", "inv-lena"]
    assert data["invitations"][0]["from"] == "Kevin"
    ok, data = run(box, "read_inbox")
    assert ok
    assert data["inbox"] == [
        {"id": "m-1", "from": "marta@example.org", "subject": "Address", "body": "412 Alder"}
    ]
    assert len(box.log) == 0


@pytest.mark.parametrize(
    ("start", "end", "free", "titles"),
    [
        ("2027-02-05T20:00", "2027-02-05T22:00", True, []),
        ("2027-02-05T18:30", "2027-02-05T20:00", False, ["Yoga"]),
        ("2027-02-05T19:00", "2027-02-05T20:00", True, []),  # slot ends as the range starts
        ("2027-02-05", "2027-02-05", False, ["Yoga"]),  # a date is the whole day
        ("2027-02-05T18:15", "2027-02-05T18:15", False, ["Yoga"]),  # an instant
        ("2027-02-10T09:00:00Z", "2027-02-10T10:00:00+01:00", False, ["Conference"]),
        ("2027-02-04", "2027-02-11", False, ["Yoga", "Conference"]),
        ("2027-02-11", "2027-02-12", True, []),
    ],
)
def test_check_calendar(box: Toolbox, start: str, end: str, free: bool, titles: list[str]) -> None:
    ok, data = run(box, "check_calendar", {"start": start, "end": end})
    assert ok
    assert data["free"] is free
    assert [s["title"] for s in data["busy"]] == titles


def test_search_products_ignores_possessives() -> None:
    """ "Tuesday's" and "Kar's" share no word: a search for the first finds nothing, so
    every product comes back, not the one whose brand happens to end in 's."""
    world = World(
        products=[
            Product(id="mix", title="Kar's Sweet 'N Salty trail mix", price=24.99),
            Product(id="chips", title="Better Made potato chips variety case", price=21.99),
        ]
    )
    box = Toolbox(world, ActionLog())
    ok, data = run(box, "search_products", {"query": "usual Tuesday's Olympiad practice"})
    assert ok and not data["matched"]
    assert {p["id"] for p in data["products"]} == {"mix", "chips"}
    ok, data = run(box, "search_products", {"query": "Kar's trail mix"})
    assert data["matched"] and [p["id"] for p in data["products"]] == ["mix"]


def test_check_calendar_bad_times(box: Toolbox) -> None:
    ok, data = run(box, "check_calendar", {"start": "next friday", "end": "2027-02-05"})
    assert not ok and "start" in data["error"]
    ok, data = run(box, "check_calendar", {"start": "2027-02-07", "end": "2027-02-05"})
    assert not ok and "before" in data["error"]


def test_search_products_ranking(box: Toolbox) -> None:
    ok, data = run(box, "search_products", {"query": "Overstory hardcover"})
    assert ok and data["matched"]
    assert [p["id"] for p in data["products"]] == ["p-book-hc", "p-book-pb"]
    ok, data = run(box, "search_products", {"query": "the overstory paperback by Powers"})
    assert [p["id"] for p in data["products"]] == ["p-book-pb", "p-book-hc"]
    ok, data = run(box, "search_products", {"query": "MUGS"})  # case and plural
    assert [p["id"] for p in data["products"]] == ["p-mug"]
    ok, data = run(box, "search_products", {"query": "bike light"})
    assert [p["id"] for p in data["products"]] == ["p-lights"]
    assert data["products"][0] == {
        "id": "p-lights",
        "title": "Bike lights",
        "price": 39.95,
        "currency": "USD",
        "attributes": {},
    }


def test_search_products_without_match_returns_everything(box: Toolbox) -> None:
    ok, data = run(box, "search_products", {"query": "kayak"})
    assert ok and data["matched"] is False
    assert [p["id"] for p in data["products"]] == ["p-mug", "p-book-pb", "p-book-hc", "p-lights"]


def test_find_documents(box: Toolbox) -> None:
    ok, data = run(box, "find_documents", {"query": "invoices for prints"})
    assert ok and data["matched"]
    assert [d["id"] for d in data["documents"]] == ["d-invoice"]
    ok, data = run(box, "find_documents", {"query": "illustration resume"})
    assert [d["id"] for d in data["documents"]] == ["d-cv"]
    ok, data = run(box, "find_documents", {"query": "taxes"})
    assert data["matched"] is False and len(data["documents"]) == 2


def test_lookup_contact(box: Toolbox) -> None:
    def names(query: str) -> list[str]:
        ok, data = run(box, "lookup_contact", {"name": query})
        assert ok
        return [c["name"] for c in data["contacts"]]

    assert names("marta") == ["Marta Lopez"]
    assert names("KEVIN") == ["Kevin Wu", "Kevin Ames"]
    assert names("coworker") == ["Kevin Wu"]
    assert names("painting") == ["Marta Lopez"]
    assert names("Marta from class") == ["Marta Lopez"]  # word fallback
    assert names("Zoe") == []
    _, data = run(box, "lookup_contact", {"name": "wu"})
    assert data["contacts"] == [
        {"name": "Kevin Wu", "email": "kevin@example.com", "relation": "coworker"}
    ]


# errors


def test_unknown_tool(box: Toolbox) -> None:
    result = box.run(ToolCall("c", "delete_everything", {}))
    assert not result.ok
    assert result.error is not None and "unknown tool 'delete_everything'" in result.error
    assert json.loads(result.content) == {"error": result.error}
    assert len(box.log) == 0


@pytest.mark.parametrize(
    ("name", "args", "needle"),
    [
        ("rsvp", {"invitation_id": "inv-kevin"}, "missing required argument 'response'"),
        ("rsvp", {"invitation_id": "inv-kevin", "response": "sure"}, "'response'"),
        ("purchase", {"product_id": "p-mug", "quantity": 0}, "'quantity'"),
        ("purchase", {"product_id": "p-mug", "quantity": 101}, "'quantity'"),
        ("purchase", {"product_id": "p-mug", "colour": "red"}, "unexpected argument 'colour'"),
        ("send", {"to": "marta@example.org", "subject": "hi"}, "missing required argument 'body'"),
        ("check_calendar", {"start": "2027-02-05"}, "missing required argument 'end'"),
        ("list_invitations", {"all": True}, "unexpected argument 'all'"),
        ("rsvp", "not json", "not valid JSON"),
        ("rsvp", ["inv-kevin"], "arguments"),
    ],
)
def test_invalid_args(box: Toolbox, name: str, args: Any, needle: str) -> None:
    result = box.run(ToolCall("c", name, args))
    assert not result.ok
    assert result.error is not None and needle in result.error
    assert json.loads(result.content) == {"error": result.error}
    assert len(box.log) == 0


@pytest.mark.parametrize(
    ("name", "args", "needle"),
    [
        ("rsvp", {"invitation_id": "inv-nobody", "response": "yes"}, "unknown invitation_id"),
        ("purchase", {"product_id": "p-yacht"}, "unknown product_id"),
        (
            "send",
            {"to": "marta@example.org", "subject": "s", "body": "b", "document_id": "d-x"},
            "unknown document_id",
        ),
        ("send", {"to": "Zoe", "subject": "s", "body": "b"}, "unknown recipient 'Zoe'"),
        ("send", {"to": "Kevin", "subject": "s", "body": "b"}, "several contacts"),
        ("send", {"to": "", "subject": "s", "body": "b"}, "empty"),
    ],
)
def test_unknown_ids_record_nothing(
    box: Toolbox, name: str, args: dict[str, Any], needle: str
) -> None:
    ok, data = run(box, name, args)
    assert not ok
    assert needle in data["error"]
    assert box.log.records == ()
    assert box.log.to_jsonable() == []


def test_unknown_id_error_lists_known_ids(box: Toolbox) -> None:
    _, data = run(box, "purchase", {"product_id": "p-yacht"})
    assert "p-mug" in data["error"] and "p-book-hc" in data["error"]


# side effects


def test_side_effects_recorded_in_order(box: Toolbox) -> None:
    ok, rsvp = run(box, "rsvp", {"invitation_id": "inv-kevin", "response": "yes"})
    assert ok and rsvp["status"] == "recorded" and rsvp["seq"] == 1
    assert rsvp["invitation"]["from"] == "Kevin"
    ok, buy = run(box, "purchase", {"product_id": "p-book-hc", "quantity": 2})
    assert ok and buy["status"] == "recorded" and buy["total"] == 58.0 and buy["seq"] == 2
    ok, mail = run(
        box,
        "send",
        {"to": "Marta", "subject": "CV", "body": "Attached.", "document_id": "d-cv"},
    )
    assert ok and mail["to"] == "marta@example.org" and mail["recipient"] == "Marta Lopez"
    assert mail["attachment"] == {"id": "d-cv", "title": "Resume"}
    ok, _ = run(box, "send", {"to": "Kevin Ames <KAMES@example.net>", "subject": "s", "body": "b"})
    assert ok
    ok, _ = run(box, "send", {"to": "stranger@example.com", "subject": "s", "body": "b"})
    assert ok

    records = box.log.records
    assert [r.seq for r in records] == [1, 2, 3, 4, 5]
    assert [r.tool for r in records] == ["rsvp", "purchase", "send", "send", "send"]
    assert records[0].args == {"invitation_id": "inv-kevin", "response": "yes"}
    assert records[1].args == {"product_id": "p-book-hc", "quantity": 2}
    assert records[2].args == {
        "to": "marta@example.org",
        "subject": "CV",
        "body": "Attached.",
        "document_id": "d-cv",
    }
    assert records[3].result["recipient"] == "Kevin Ames"
    assert records[3].args["to"] == "kames@example.net"  # the contact's address, as stored
    assert records[4].result["recipient"] is None
    assert "seq" not in records[0].result
    assert box.log.to_jsonable()[1]["args"]["quantity"] == 2


def test_read_only_tools_never_record(box: Toolbox) -> None:
    for name, spec in TOOL_SPECS.items():
        if spec.side_effecting:
            continue
        args = {
            "check_calendar": {"start": "2027-02-05", "end": "2027-02-06"},
            "search_products": {"query": "mug"},
            "find_documents": {"query": "resume"},
            "lookup_contact": {"name": "marta"},
        }.get(name, {})
        ok, _ = run(box, name, args)
        assert ok, name
    assert len(box.log) == 0


def test_args_as_json_string(box: Toolbox) -> None:
    ok, data = run(
        box, "rsvp", '{"invitation_id": "inv-lena", "response": "maybe", "note": "Maybe late"}'
    )
    assert ok and data["note"] == "Maybe late"
    assert box.log.records[0].args == {
        "invitation_id": "inv-lena",
        "response": "maybe",
        "note": "Maybe late",
    }


# action log


def test_action_log_matches_semantics(box: Toolbox) -> None:
    run(box, "rsvp", {"invitation_id": "inv-kevin", "response": "yes", "note": "See you!"})
    run(box, "send", {"to": "Marta", "subject": "hi", "body": "b"})
    log = box.log
    assert log.matches("rsvp", {"invitation_id": "inv-kevin", "response": "yes"})
    assert log.matches("rsvp", {"invitation_id": "inv-kevin"})  # unlisted args are free
    assert log.matches("rsvp", {})
    assert log.matches("rsvp")
    assert not log.matches("rsvp", {"invitation_id": "inv-kevin", "response": "no"})
    assert not log.matches("rsvp", {"invitation_id": "inv-lena"})
    assert not log.matches("purchase", {})
    assert not log.matches("rsvp", {"invitation_id": "inv-kevin", "guests": 2})
    assert log.matches("send", {"to": "marta@example.org"})
    assert log.matches("send", {"to": "Marta Lopez"})  # the contact's name matches too
    assert not log.matches("send", {"to": "kevin@example.com"})
    assert [r.seq for r in log.find("send")] == [2]
    assert args_match({"a": 1, "b": 2}, {"a": 1})
    assert not args_match({"a": 1}, {"a": 1, "b": 2})
    assert args_match({"a": 1}, {"b": None})


def test_action_log_jsonl_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "actions.jsonl"
    log = ActionLog(path)
    box = Toolbox(sample_world(), log)
    run(box, "purchase", {"product_id": "p-mug"})
    run(box, "rsvp", {"invitation_id": "nope", "response": "yes"})  # not recorded
    run(box, "rsvp", {"invitation_id": "inv-lena", "response": "no"})
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["args"] == {"product_id": "p-mug", "quantity": 1}

    assert ActionLog.read_jsonl(path) == list(log.records)
    reopened = ActionLog(path)
    assert reopened.to_jsonable() == log.to_jsonable()
    record = reopened.append("send", {"to": "x@example.com"}, {"status": "recorded"})
    assert record.seq == 3
    assert len(path.read_text().splitlines()) == 3


# specs


def test_tool_specs_and_side_effecting() -> None:
    assert list(TOOL_SPECS) == [
        "list_invitations",
        "check_calendar",
        "search_products",
        "find_documents",
        "read_inbox",
        "lookup_contact",
        "rsvp",
        "purchase",
        "send",
    ]
    assert frozenset({"rsvp", "purchase", "send"}) == SIDE_EFFECTING
    assert {n for n, s in TOOL_SPECS.items() if s.side_effecting} == SIDE_EFFECTING


def _has_key(node: Any, key: str) -> bool:
    if isinstance(node, dict):
        return any(
            k == key or _has_key(v, key) for k, v in node.items() if k != "properties"
        ) or any(_has_key(v, key) for v in node.get("properties", {}).values())
    if isinstance(node, list):
        return any(_has_key(v, key) for v in node)
    return False


def test_openai_tools_schemas() -> None:
    schemas = {s["function"]["name"]: s for s in openai_tools()}
    assert list(schemas) == list(TOOL_SPECS)
    for schema in schemas.values():
        assert schema["type"] == "function"
        fn = schema["function"]
        assert fn["description"]
        assert fn["parameters"]["type"] == "object"
        assert "properties" in fn["parameters"]
        assert not _has_key(fn["parameters"], "title")
    rsvp = schemas["rsvp"]["function"]["parameters"]
    assert rsvp["required"] == ["invitation_id", "response"]
    assert rsvp["properties"]["response"]["enum"] == ["yes", "no", "maybe"]
    assert rsvp["properties"]["note"]["type"] == "string"
    assert rsvp["additionalProperties"] is False
    purchase = schemas["purchase"]["function"]["parameters"]
    assert purchase["required"] == ["product_id"]
    assert purchase["properties"]["quantity"]["minimum"] == 1
    assert purchase["properties"]["quantity"]["maximum"] == 100
    send = schemas["send"]["function"]["parameters"]
    assert send["required"] == ["to", "subject", "body"]
    assert set(send["properties"]) == {"to", "subject", "body", "document_id"}
    calendar = schemas["check_calendar"]["function"]["parameters"]
    assert calendar["required"] == ["start", "end"]
    assert schemas["list_invitations"]["function"]["parameters"]["properties"] == {}
    json.dumps(openai_tools())  # serialisable


def test_openai_tools_subset() -> None:
    assert [s["function"]["name"] for s in openai_tools(["send", "rsvp"])] == ["send", "rsvp"]
    assert openai_tools([]) == []
    with pytest.raises(KeyError):
        openai_tools(["teleport"])


def test_tools_imports_nothing_heavy() -> None:
    code = (
        "import sys, tools; "
        "bad = [m for m in ('textual', 'langgraph', 'chromadb', 'litellm', 'agent', 'ledger', "
        "'scenarios', 'tui') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
