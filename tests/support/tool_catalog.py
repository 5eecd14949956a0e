"""A small catalog of tool definitions (core, MCP and plugin tools) the tool-search tests share."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest


def tool(
    name: str,
    desc: str,
    params: tuple[str, ...] | list[str] = (),
    required: tuple[str, ...] | list[str] = (),
    source: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    properties: dict[str, Any] = {p: {"type": "string", "description": f"The {p}."} for p in params}
    properties.update(extra)
    d: dict[str, Any] = {
        "type": "function",
        "function": {
            "name": name,
            "description": desc,
            "parameters": {"type": "object", "properties": properties, "required": list(required)},
        },
    }
    if source:
        d["source"] = source
    return d


CATALOG = [
    tool("terminal", "Run a shell command on the host.", ["command"], ["command"]),
    tool("read_file", "Read a text file in pages.", ["path", "offset", "limit"], ["path"]),
    tool("github_create_issue", "Create a new issue in a GitHub repository.", ["owner", "repo", "title", "body"], ["owner", "repo", "title"], "mcp-github"),
    tool("github_list_issues", "List issues of a repository, filtered by state or label.", ["owner", "repo", "state", "labels"], ["owner", "repo"], "mcp-github"),
    tool("github_create_pull_request", "Open a pull request from a branch.", ["owner", "repo", "head", "base"], ["owner", "repo", "head"], "mcp-github"),
    tool("github_merge_pull_request", "Merge an open pull request.", ["owner", "repo", "number"], ["number"], "mcp-github"),
    tool("github_search_code", "Search source code across repositories.", ["query"], ["query"], "mcp-github"),
    tool("slack_send_message", "Post a message to a Slack channel.", ["channel", "text"], ["channel", "text"], "mcp-slack"),
    tool("slack_list_channels", "List the channels of a workspace.", ["workspace"], [], "mcp-slack"),
    tool("slack_add_reaction", "Add an emoji reaction to a message.", ["channel", "timestamp", "emoji"], ["channel", "timestamp", "emoji"], "mcp-slack"),
    tool("jira_create_ticket", "Create a Jira ticket in a project.", ["project", "summary", "description"], ["project", "summary"], "mcp-jira"),
    tool("jira_transition_ticket", "Move a ticket to another workflow status.", ["ticket", "status"], ["ticket", "status"], "mcp-jira"),
    tool("gdrive_upload_file", "Upload a file to Google Drive.", ["path", "folder"], ["path"], "mcp-gdrive"),
    tool("gdrive_search_files", "Find files in Drive by name or content.", ["query"], ["query"], "mcp-gdrive"),
    tool("stripe_create_invoice", "Create an invoice for a customer.", ["customer", "amount", "currency"], ["customer", "amount"], "mcp-stripe"),
    tool("stripe_refund_payment", "Refund a payment, fully or partially.", ["payment", "amount"], ["payment"], "mcp-stripe"),
    tool("postgres_run_query", "Run a read-only SQL query against the database.", ["sql"], ["sql"], "mcp-postgres"),
    tool("postgres_list_tables", "List the tables of a database schema.", ["schema"], [], "mcp-postgres"),
    tool("calendar_create_event", "Schedule a calendar event with attendees.", ["title", "start", "end", "attendees"], ["title", "start"], "plugin-calendar"),
    tool("weather_forecast", "Get the weather forecast for a city.", ["city", "days"], ["city"], "plugin-weather"),
]

#: The written-down answers assume Snowball stemming ("issues" finds "issue").
needs_stemmer = pytest.mark.skipif(
    importlib.util.find_spec("snowballstemmer") is None,
    reason="snowballstemmer is not installed (pip install snowballstemmer)",
)
