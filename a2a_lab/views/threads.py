"""Work sessions and their threads as a readable conversation: the one import for views.

The reference dashboard lists a work session's threads as raw events. Reading one is hard:
Discord mentions are bare ids (``<@1300…>``), markdown is shown as source, no-reply outcomes
are Korean ``[outcome] …`` sentences, threads are named by ids (``conv:<uuid>``), and there is
no search. Each concern has its module; this one gathers their public names:

* :mod:`~a2a_lab.views.mentions`: Discord user mentions ``<@id>`` resolved to names (a
  mapping you give: neither the log nor ``openclaw.json`` records which user is which agent);
* :mod:`~a2a_lab.views.markdown`: message markdown as sanitised HTML (markdown-it-py);
* :mod:`~a2a_lab.views.labels`: a clear label per message, the outcomes of runtime §3b
  included ("no reply: waited more than 300 s", "refused: concurrency limit", …);
* :mod:`~a2a_lab.views.titles`: thread and session titles from the task instead of raw ids;
* :mod:`~a2a_lab.views.messages`: :func:`thread_messages`, one row per message with sender,
  receiver, time in a display time zone and a message number, and a search filter
  (:class:`MessageOptions` says which messages and how they read);
* :mod:`~a2a_lab.views.widgets`: :func:`thread_view` and :func:`sessions_table` as HTML;
* :mod:`~a2a_lab.views.search`: :func:`search_chart`, a message index searchable without a
  kernel.
"""

from __future__ import annotations

from a2a_lab.views.markdown import markdown_html_expr, render_markdown
from a2a_lab.views.mentions import mentions_expr
from a2a_lab.views.messages import MESSAGE_COLUMNS, MessageOptions, thread_messages
from a2a_lab.views.search import search_chart
from a2a_lab.views.titles import session_titles, task_titles
from a2a_lab.views.widgets import SessionsTable, ThreadView, sessions_table, thread_view

__all__ = [
    "MESSAGE_COLUMNS",
    "MessageOptions",
    "SessionsTable",
    "ThreadView",
    "markdown_html_expr",
    "mentions_expr",
    "render_markdown",
    "search_chart",
    "session_titles",
    "sessions_table",
    "task_titles",
    "thread_messages",
    "thread_view",
]
