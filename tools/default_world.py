"""A small, believable world for chatting with the assistant outside the benchmark."""

from __future__ import annotations

from tools.world import World

__all__ = ["default_world"]

_DEFAULT_WORLD = {
    "invitations": [
        {
            "id": "inv-priya-lunch",
            "from": "Priya Shah",
            "event": "team planning lunch at Nonna's",
            "when": "2027-01-14T12:30",
        },
        {
            "id": "inv-marta-openhouse",
            "from": "Marta Alvarez",
            "event": "studio open house",
            "when": "2027-01-16T14:00",
        },
        {
            "id": "inv-sam-games",
            "from": "Sam Okafor",
            "event": "board game night",
            "when": "2027-01-22T19:00",
        },
        {
            "id": "inv-dana-potluck",
            "from": "Dana Kim",
            "event": "neighborhood potluck",
            "when": "2027-01-24T17:30",
        },
    ],
    "calendar": {
        "busy": [
            {"start": "2027-01-14T12:00", "end": "2027-01-14T13:00", "title": "Dentist"},
            {"start": "2027-01-19T18:30", "end": "2027-01-19T20:30", "title": "Painting class"},
            {"start": "2027-01-29T07:00", "end": "2027-01-29T10:30", "title": "Flight to Denver"},
        ]
    },
    "products": [
        {
            "id": "prod-doet-paperback",
            "title": "The Design of Everyday Things (paperback)",
            "price": 18.99,
            "attributes": {"author": "Don Norman", "format": "paperback", "edition": "revised"},
        },
        {
            "id": "prod-doet-hardcover",
            "title": "The Design of Everyday Things (hardcover)",
            "price": 32.5,
            "attributes": {"author": "Don Norman", "format": "hardcover", "edition": "revised"},
        },
        {
            "id": "prod-pourover",
            "title": "Ceramic pour-over coffee dripper",
            "price": 24.0,
            "attributes": {"color": "white", "material": "ceramic", "fits": "size 02 filters"},
        },
        {
            "id": "prod-headphones",
            "title": "Wireless noise-cancelling headphones",
            "price": 149.0,
            "attributes": {"color": "black", "battery": "30 hours"},
        },
        {
            "id": "prod-bike-lights",
            "title": "USB rechargeable bike light set",
            "price": 39.95,
            "attributes": {"lumens": 400, "includes": ["front light", "rear light"]},
        },
        {
            "id": "prod-watercolors",
            "title": "Watercolor paint set, 24 colors",
            "price": 45.0,
            "attributes": {"brand": "Winsor", "includes": ["travel brush", "mixing palette"]},
        },
    ],
    "documents": [
        {
            "id": "doc-q4-summary",
            "title": "Q4 sales summary",
            "body": "Revenue up 8% over Q3, driven by print orders. "
            "Two wholesale accounts renewed; one paused until spring.",
        },
        {
            "id": "doc-denver-itinerary",
            "title": "Denver trip itinerary",
            "body": "Fly out January 29 at 7:00, hotel on Larimer Street for three nights, "
            "client workshop on January 30, return flight February 1.",
        },
        {
            "id": "doc-lemon-bars",
            "title": "Lemon bar recipe",
            "body": "Shortbread crust, four eggs, zest and juice of three lemons, "
            "bake 25 minutes at 175 C, dust with powdered sugar.",
        },
    ],
    "inbox": [
        {
            "id": "mail-priya-q4",
            "from": "priya.shah@example.com",
            "subject": "Q4 numbers before Thursday?",
            "body": "Hi! Could you send me the Q4 sales summary before the planning lunch?",
        },
        {
            "id": "mail-marta-address",
            "from": "marta.alvarez@example.org",
            "subject": "Open house details",
            "body": "It's at 412 Alder Street, studio 3B. Come by any time after two.",
        },
        {
            "id": "mail-bookshop",
            "from": "news@corner-bookshop.example",
            "subject": "New arrivals this week",
            "body": "Design classics are back in stock, including a new hardcover printing.",
        },
    ],
    "contacts": [
        {"name": "Priya Shah", "email": "priya.shah@example.com", "relation": "coworker"},
        {"name": "Leo Brennan", "email": "leo.brennan@example.com", "relation": "manager"},
        {
            "name": "Marta Alvarez",
            "email": "marta.alvarez@example.org",
            "relation": "friend from painting class",
        },
        {"name": "Sam Okafor", "email": "sam.okafor@example.net", "relation": "college friend"},
        {"name": "Dana Kim", "email": "dana.kim@example.org", "relation": "neighbor"},
    ],
}


def default_world() -> World:
    """A fresh copy of the chat world (early 2027): invitations, calendar, shop, files, mail."""
    return World.model_validate(_DEFAULT_WORLD)
