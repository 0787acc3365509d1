"""Fifty-odd realistic tools for the retrieval tests, as a plugin file's source: enough that
retrieval comes on by itself (past 20) beside the four bundled tools, in domains a real
catalogue has, each a real function (it echoes what it was asked, as JSON)."""

from __future__ import annotations

from pathlib import Path

# (name, description, parameter, parameter description)
TOOLS: list[tuple[str, str, str, str]] = [
    ("get_exchange_rate", "Current exchange rate between two currencies.", "pair", "e.g. USD/CNY"),
    ("convert_currency", "Convert an amount of money into another currency.", "amount", "amount"),
    ("get_stock_quote", "Latest stock price quote for a ticker symbol.", "symbol", "ticker"),
    ("loan_payment", "Monthly payment of a loan or mortgage.", "principal", "amount borrowed"),
    ("compound_interest", "Future value of savings with compound interest.", "rate", "yearly"),
    ("income_tax", "Estimate income tax for a yearly salary.", "salary", "gross salary"),
    ("split_bill", "Split a restaurant bill with tip among friends.", "total", "bill total"),
    ("crypto_price", "Price of a cryptocurrency such as bitcoin.", "coin", "coin name"),
    ("search_flights", "Search flights between two airports on a date.", "route", "FROM-TO"),
    ("book_hotel", "Book a hotel room in a city for some nights.", "city", "city name"),
    ("train_timetable", "Train departures between two stations.", "station", "departure"),
    ("get_directions", "Driving or walking directions and route between places.", "to", "goal"),
    ("geocode_address", "Latitude and longitude coordinates of a street address.", "address", ""),
    ("nearby_restaurants", "Restaurants near a place, with ratings.", "place", "where"),
    ("visa_requirements", "Whether a visa is needed to travel to a country.", "country", ""),
    ("city_population", "Population of a city.", "city", "city name"),
    ("air_quality", "Air quality index (AQI) and pollution for a city.", "city", "city name"),
    ("sunrise_sunset", "Sunrise and sunset times for a city and date.", "city", "city name"),
    ("public_holidays", "Public holidays of a country in a year.", "country", "ISO code"),
    ("days_between", "Number of days between two dates.", "start", "first date"),
    ("world_clock_meeting", "Find a meeting hour across several time zones.", "zones", "zones"),
    ("translate_text", "Translate text into another language.", "text", "text to translate"),
    ("detect_language", "Detect which language a text is written in.", "text", "any text"),
    ("spell_check", "Find and fix spelling mistakes in English text.", "text", "text"),
    ("summarize_text", "Summarize a long text in a few sentences.", "text", "text"),
    ("word_count", "Count the words and characters of a text.", "text", "text"),
    ("sentiment_analysis", "Whether a review sounds positive or negative.", "text", "review"),
    ("define_word", "Dictionary definition of an English word.", "word", "word"),
    ("find_synonyms", "Synonyms of a word.", "word", "word"),
    ("regex_test", "Test a regular expression against sample text.", "pattern", "regex"),
    ("make_qr_code", "Make a QR code image for a text or link.", "data", "content"),
    ("base64_encode", "Encode text as base64.", "text", "text"),
    ("hash_text", "SHA-256 hash of a text.", "text", "text"),
    ("generate_password", "Generate a strong random password.", "length", "characters"),
    ("fetch_web_page", "Download a web page and return its text.", "url", "page URL"),
    ("dns_lookup", "DNS records of a domain name.", "domain", "domain"),
    ("http_status", "Check whether a website is up and its HTTP status.", "url", "site"),
    ("send_email", "Send an email to an address.", "to", "recipient address"),
    ("send_sms", "Send a text message to a phone number.", "phone", "phone number"),
    ("create_calendar_event", "Add an event to the calendar.", "title", "event title"),
    ("set_reminder", "Set a reminder at a time.", "when", "time"),
    ("add_todo", "Add a task to the to-do list.", "task", "task"),
    ("search_contacts", "Find a person in the address book.", "name", "person"),
    ("track_package", "Track a parcel shipment by its tracking number.", "number", "tracking"),
    ("recipe_search", "Find recipes with an ingredient.", "ingredient", "ingredient"),
    ("nutrition_facts", "Calories and nutrition of a food.", "food", "food"),
    ("bmi_calculator", "Body mass index from weight and height.", "weight_kg", "weight"),
    ("daily_steps", "Steps walked today from the fitness tracker.", "day", "date"),
    ("movie_showtimes", "Cinema showtimes of a movie in a city.", "movie", "film title"),
    ("song_lyrics", "Lyrics of a song.", "title", "song title"),
    ("news_headlines", "Top news headlines on a topic.", "topic", "topic"),
    ("roll_dice", "Roll dice, e.g. 2d6.", "spec", "dice"),
    ("flip_coin", "Flip a coin.", "times", "how many flips"),
    ("horoscope", "Today's horoscope for a zodiac sign.", "sign", "zodiac sign"),
    ("disk_usage", "Disk space used and free on the server.", "path", "mount point"),
    ("list_processes", "Running processes and their memory use.", "sort", "field"),
]


def plugin_source() -> str:
    """The tools as one plugin file: each a typed function with a docstring."""
    lines = ["import json", "from toolcall_cli.tools.registry import tool", ""]
    for name, description, parameter, explained in TOOLS:
        lines += [
            "",
            "@tool(permission='read')",
            f"def {name}({parameter}: str) -> str:",
            f'    """{description}',
            "",
            "    Args:",
            f"        {parameter}: {explained or parameter}",
            '    """',
            f"    return json.dumps({{'tool': {name!r}, {parameter!r}: {parameter}}})",
            "",
        ]
    return "\n".join(lines)


def write_plugin(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "many.py"
    path.write_text(plugin_source(), encoding="utf-8")
    return path
