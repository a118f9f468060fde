"""The only tags and filters a prompt template has: text formatting that cannot loop without
bound or multiply its input (no lorem, widthratio, ljust, join, stringformat ...)."""
from django.template import Library, defaultfilters, defaulttags

register = Library()

TAGS = ("if", "for", "with", "comment", "verbatim", "firstof", "spaceless", "templatetag",
        "filter")
FILTERS = ("lower", "upper", "title", "capfirst", "default", "default_if_none", "length",
           "first", "last", "slice", "truncatechars", "truncatewords", "wordcount", "cut",
           "yesno", "pluralize", "striptags", "linebreaksbr", "escape", "safe")

for _name in TAGS:
    register.tag(_name, defaulttags.register.tags[_name])
for _name in FILTERS:
    register.filter(_name, defaultfilters.register.filters[_name])
