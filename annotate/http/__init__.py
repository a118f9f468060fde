"""Web plumbing shared by pages and API: error responses, body limits, outages, rate limits."""
