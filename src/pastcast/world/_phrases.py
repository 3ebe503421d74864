"""Phrase pools of the news generator.

Cue phrases follow one fixed convention (documented in docs/world.md) so that simple readers can
rely on plain English cues: positive pools contain "is increasingly likely", "is expected to", "on
track to", "gains momentum", "is favored", "leads the latest polls", "has been confirmed", "poised
to", "strong support for", "boost for"; negative pools "is unlikely to", "faces doubts", "has
stalled", "setback for", "trails in", "is losing ground", "has been delayed", "struggles to",
"faces strong opposition", "blow to". Filler and distractor text avoids all of these. Outside
these fixed phrases, negative sentences avoid words that generic readers take as positive ("win",
"ahead", "support") and positive sentences avoid negative ones.
"""

from __future__ import annotations

__all__ = [
    "ATTRIBUTIONS",
    "BINARY_NEG",
    "BINARY_POS",
    "DISTRACTORS",
    "FILLERS",
    "HEADLINE_SUFFIXES",
    "LOOKALIKES",
    "MULTI_NEG",
    "MULTI_POS",
    "NEGATIVE_CUES",
    "POSITIVE_CUES",
    "SOURCES",
]

POSITIVE_CUES = (
    "is increasingly likely",
    "is expected to",
    "on track to",
    "gains momentum",
    "is favored",
    "leads the latest polls",
    "has been confirmed",
    "poised to",
    "strong support for",
    "boost for",
)
NEGATIVE_CUES = (
    "is unlikely to",
    "faces doubts",
    "has stalled",
    "setback for",
    "trails in",
    "is losing ground",
    "has been delayed",
    "struggles to",
    "faces strong opposition",
    "blow to",
)

# Binary slots: {A} actor, {a} action, {N} noun phrase (each capitalised where a sentence starts).
BINARY_POS = (
    "{A} is increasingly likely to {a}",
    "{A} is expected to {a}",
    "{A} is on track to {a}",
    "{N} gains momentum",
    "{A} is favored to {a}",
    "Support for {N} leads the latest polls",
    "Backing for {N} has been confirmed",
    "{A} is poised to {a}",
    "Strong support for {N}",
    "Boost for {N}",
)
BINARY_NEG = (
    "{A} is unlikely to {a}",
    "{N} faces doubts",
    "{N} has stalled",
    "Setback for {N}",
    "Backing for {N} trails in the latest polls",
    "{A} is losing ground in the effort to {a}",
    "{N} has been delayed",
    "{A} struggles to {a}",
    "{N} faces strong opposition",
    "Blow to {N}",
)
# Multi slots: {O} option label, {a} action, {N} contest noun phrase.
MULTI_POS = (
    "{O} is increasingly likely to {a}",
    "{O} is expected to {a}",
    "{O} is on track to {a}",
    "{O} gains momentum in {N}",
    "{O} is favored to {a}",
    "{O} leads the latest polls in {N}",
    "{O} has been confirmed as a frontrunner in {N}",
    "{O} is poised to {a}",
    "Strong support for {O} in {N}",
    "Boost for {O} in {N}",
)
# Negative multi cues name the contest rather than the action, which often contains "win".
MULTI_NEG = (
    "{O} is unlikely to come out on top in {N}",
    "{O} faces doubts in {N}",
    "The bid by {O} in {N} has stalled",
    "Setback for {O} in {N}",
    "{O} trails in the latest polls in {N}",
    "{O} is losing ground in {N}",
    "The campaign of {O} in {N} has been delayed",
    "{O} struggles to gain traction in {N}",
    "{O} faces strong opposition in {N}",
    "Blow to {O} in {N}",
)

HEADLINE_SUFFIXES = ("", "", "", ", analysts say", ", sources say", " - report", ", survey finds")
ATTRIBUTIONS = (
    "according to people familiar with the matter",
    "analysts said on Monday",
    "a senior official told reporters",
    "according to a new survey",
    "market watchers said",
    "according to briefing notes seen by reporters",
    "several observers noted",
    "according to a statement released late on Friday",
)

FILLERS = (
    "Officials declined to comment further.",
    "The report did not give a timeline.",
    "Further updates are due in the coming weeks.",
    "Trading volumes were described as moderate.",
    "Commentators remain divided over what comes next.",
    "The issue has drawn wide public attention this year.",
    "A spokesperson said more details would follow.",
    "Local media carried the story prominently.",
    "The figures were compiled from several public sources.",
    "Critics say the process has lacked transparency.",
    "Supporters and opponents held rallies over the weekend.",
    "Independent experts urged caution in reading too much into a single report.",
    "The announcement came after a week of speculation.",
    "Reporters were briefed on condition of anonymity.",
    "Attention now turns to the next round of announcements.",
    "Neither side offered a public response.",
)

# Unrelated stories with fresh invented names: (title, text).
DISTRACTORS = (
    ("{C} opens new public library", "The city of {C} opened a new public library with a "
     "rooftop garden. The building took three years to complete."),
    ("{K} names {P} as chief financial officer", "{K} appointed {P} as chief financial officer. "
     "{P} previously worked in logistics."),
    ("Festival of {W} draws large crowds in {C}", "The annual festival of {W} filled the streets "
     "of {C} with music and food stalls."),
    ("{P} publishes memoir about growing up in {C}", "In a new memoir, {P} recalls a childhood "
     "in {C} and a long career in theatre."),
    ("Storm warning issued for coastal {N}", "The weather service of {N} issued a storm warning "
     "for the coast. Ferries were cancelled for the day."),
    ("{K} recalls {X} chargers over overheating risk", "{K} asked customers to return {X} "
     "chargers after reports of overheating. No injuries were reported."),
    ("Museum in {C} unveils restored {W} tapestry", "A museum in {C} put the restored {W} "
     "tapestry back on display after two years of conservation work."),
    ("{N} tourism numbers rise for third year", "Visitor numbers in {N} rose again, led by "
     "arrivals from neighbouring countries."),
    ("Researchers at {K} describe new species of beetle", "Scientists at {K} described a new "
     "species of beetle, named {W}, found in the forests of {N}."),
    ("{C} marathon route changed due to roadworks", "Organisers changed the route of the {C} "
     "marathon because of roadworks near the old harbour."),
    ("{P} wins {W} poetry award", "{P} received the {W} poetry award for a collection about the "
     "sea. The jury praised its restraint."),
    ("Train strike disrupts commuters in {C}", "A one-day train strike left commuters in {C} "
     "searching for buses. Services resumed in the evening."),
    ("{K} opens a new office in {C}", "{K} opened an office in {C} with room for two hundred "
     "staff, mostly engineers."),
    ("Recipe column: slow-cooked {W} stew", "This week's recipe column features a slow-cooked "
     "stew from the hills of {N}."),
)  # fmt: skip

# Stories that reuse an event's proper name {E} but are about something else.
LOOKALIKES = (
    ("{E} sponsors youth chess tournament", "{E} is the main sponsor of a youth chess "
     "tournament this month. Entries opened on Monday."),
    ("{E} featured in new documentary series", "A new documentary series includes an episode "
     "about {E}. Filming took place over the summer."),
    ("Letters: readers write about {E}", "Readers sent letters this week about {E}, mostly "
     "about its history rather than current affairs."),
    ("{E} trends on social media after viral video", "A short video mentioning {E} was shared "
     "widely online. The clip shows a dog on a skateboard."),
    ("Photo essay: an autumn day around {E}", "Our photographer spent a day documenting daily "
     "life connected to {E}."),
    ("Charity run raises funds in the name of {E}", "A charity run named after {E} raised funds "
     "for a children's hospital."),
)  # fmt: skip

# Fictional outlets: (name, url host).
SOURCES = (
    ("The Meridian Ledger", "meridian-ledger.example"),
    ("Northgate Wire", "northgate-wire.example"),
    ("Calloway Post", "calloway-post.example"),
    ("Harborline Financial", "harborline.example"),
    ("The Civic Courier", "civic-courier.example"),
    ("Atlas Daily", "atlas-daily.example"),
    ("Brightwater Times", "brightwater-times.example"),
    ("The Quorum Review", "quorum-review.example"),
    ("Lanternfield Herald", "lanternfield-herald.example"),
    ("Westmarch Observer", "westmarch-observer.example"),
)
