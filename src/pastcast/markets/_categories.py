"""Topic categories for questions whose source gives none (ForecastBench), from tags or text.

The names follow the topics Hindcast reports results by (Sports, Awards, Trading/commodities,
Entertainment, Elections/politics, Social/celebrity, Tech/AI, Crypto, and the smaller Geopolitics,
Economic, Health, Corporate, Weather), plus Science; ``Other`` when no rule matches. Rules are
keyword patterns tried in a fixed order (the more specific topics first, so "Best Picture at the
Academy Awards" is an award, not a film), over the source's tags first, then the title, then the
description. The result depends on the question's own text only: it can be shown to agents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

OTHER = "Other"

_RULES: tuple[tuple[str, str], ...] = (
    (
        "Awards",
        r"award|oscars?|grammys?|emmys?|golden globes?|nobel|ballon d.or|person of the year|"
        r"best (picture|actor|actress|director|album|song|screenplay)|mvp|player of the year|"
        r"rookie of the year|heisman|booker prize",
    ),
    (
        "Crypto",
        r"crypto\w*|bitcoin|btc|ethereum|eth|solana|sol|xrp|dogecoin|memecoin|stablecoin|"
        r"airdrop|fdv|binance|coinbase|token|blockchain|defi|nft",
    ),
    (
        "Health",
        r"pandemic|covid\w*|vaccin\w*|measles|outbreak|bird flu|h5n1|mpox|epidemic|"
        r"health emergency|disease|fda approv\w*|who declare",
    ),
    (
        "Weather",
        r"weather|hurricane|typhoon|tornado|temperature|warmest|hottest|coldest|snowfall|"
        r"rainfall|heatwave|el ni.o|la ni.a|earthquake|wildfire|climate",
    ),
    (
        "Economic",
        r"inflation|cpi|gdp|unemployment|jobs report|payrolls|recession|interest rates?|"
        r"rate cuts?|rate hikes?|fed|fomc|federal reserve|ecb|central bank|tariffs?|"
        r"national debt|government shutdown|econom\w*",
    ),
    (
        "Trading/commodities",
        r"stocks?|s&p|nasdaq|dow jones|shares|share price|market cap|ipo|oil|brent|wti|"
        r"gold|silver|copper|natural gas|commodit\w*|treasury yield|close (above|below)|"
        r"all.time high|exchange rate",
    ),
    (
        "Tech/AI",
        r"ai|a\.i\.|artificial intelligence|openai|anthropic|chatgpt|gpt-?\d*\w*|llm|xai|"
        r"deepmind|gemini|claude|grok|ai model|nvidia|chips?|semiconductor\w*|iphone|app store|"
        r"software|spacex|starship|robot\w*|self.driving|quantum|tech",
    ),
    (
        "Entertainment",
        r"halftime show|billboard|hot 100|#1 (song|album)|album|songs?|singles?|spotify|"
        r"box office|movies?|films?|netflix|hbo|disney|tv (show|series)|anime|eurovision|"
        r"concert|james bond|video games?|gta|rotten tomatoes|youtube|twitch|streamer|"
        r"pop culture|entertainment|music",
    ),
    (
        "Sports",
        r"nba|nfl|mlb|nhl|wnba|mls|ncaa|fifa|uefa|premier league|la liga|serie a|bundesliga|"
        r"champions league|world cup|super bowl|stanley cup|world series|olympic\w*|medals?|"
        r"grand slam|wimbledon|us open|french open|australian open|f1|formula 1|grand prix|"
        r"sports?|ufc|boxing|fight|tennis|golf|masters|pga|chess|cricket|rugby|playoffs?|"
        r"championship|tournament|league|cup|match|season",
    ),
    (
        "Elections/politics",
        r"elect\w*|nominee|nomination|primary|presiden\w*|governor|senat\w*|congress\w*|"
        r"parliament\w*|prime minister|chancellor|approval rating|vote|voters|referendum|"
        r"impeach\w*|democrat\w*|republican\w*|gop|cabinet|minister|mayor|speaker|"
        r"supreme court|coalition|party|poll\w*|executive order|legislation|bill|politic\w*",
    ),
    (
        "Geopolitics",
        r"war|invade|invasion|ceasefire|military|troops|strikes? on|airstrikes?|missiles?|"
        r"nuclear|nukes?|sanctions?|annex\w*|conflict|nato|blockade|hostages?|"
        r"recogni[sz]e|diplomatic|treaty|israel\w*|hamas|gaza|hezbollah|iran\w*|russia\w*|"
        r"ukrain\w*|taiwan|north korea|venezuela\w*|regime|coup|territory|strait of hormuz|"
        r"geopolitic\w*",
    ),
    (
        "Social/celebrity",
        r"celebrit\w*|richest|married|marry|engaged|divorce|pregnant|baby|tweets?|"
        r"followers|kardashian|taylor swift|elon musk|musk|criminal charges|arrested|"
        r"sentenced|indicted|trial",
    ),
    (
        "Corporate",
        r"ceo|company|companies|merger|acquisition|acquire\w*|bankrupt\w*|layoffs?|earnings|"
        r"revenue|deliveries|discontinue\w*|launch\w*|release date|lawsuit|antitrust|business",
    ),
    (
        "Science",
        r"nasa|mars|moon|asteroid|spacecraft|telescope|physics|fusion|discovery|scientists?|"
        r"species|research|science",
    ),
)

CATEGORIES: tuple[str, ...] = (*(name for name, _ in _RULES), OTHER)
"""Every category ``categorize`` can return, in the order its rules are tried."""

# Word boundaries on both sides: "ai" must not match "said", "eth" not "method".
_COMPILED = tuple(
    (name, re.compile(rf"(?<![\w#])(?:{pattern})(?!\w)", re.IGNORECASE)) for name, pattern in _RULES
)


def categorize(title: str, description: str = "", tags: Iterable[str] = ()) -> str:
    """The topic of a question: from its tags, else its title, else its description."""
    for text in (" ; ".join(tags), title, description):
        for name, pattern in _COMPILED:
            if text and pattern.search(text):
                return name
    return OTHER
