"""The lengths the reference runtime cuts event texts to (runtime §1-§2).

Both cuts are JavaScript's ``text.slice(0, n)``, in UTF-16 code units
(:func:`a2a_lab.reference.jsstr.js_slice`).
"""

from __future__ import annotations

from typing import Final

#: ``message`` of an ``a2a.send`` (and of the replies the runtime logs): at most 4,000.
MESSAGE_LIMIT: Final = 4000
#: ``replyPreview`` of an ``a2a.response`` or ``a2a.spawn``: at most 200.
PREVIEW_LIMIT: Final = 200
