"""Sessions every process of a cluster recognises: a token is signed with a secret they share."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from turinglab.arena.core.participants import Participant, Sessions


class SignedSessions(Sessions):
    """Tokens are "<participant id>.<HMAC>": any process with the secret recognises them."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self._key = secret.encode()

    def _sign(self, pid: str) -> str:
        return hmac.new(self._key, pid.encode(), hashlib.sha256).hexdigest()

    def derived(self, label: str) -> str:
        """A secret of every process, for `label`: never a token's signature (no pid has
        a NUL), and telling nothing of the key."""
        return self._sign("\0" + label)

    def new(self) -> Participant:
        pid = f"p-{secrets.token_hex(6)}"
        p = Participant(id=pid, token=f"{pid}.{self._sign(pid)}")
        self.by_id[pid] = p
        return p

    def get(self, token: str | None) -> Participant | None:
        pid, _, sig = (token or "").partition(".")
        if not pid or not hmac.compare_digest(sig, self._sign(pid)):
            return None
        return self.ensure(pid)

    def ensure(self, pid: str) -> Participant:
        """This process's record of a person, made on first sight (from another process)."""
        p = self.by_id.get(pid)
        if p is None:
            p = self.by_id[pid] = Participant(id=pid, token=f"{pid}.{self._sign(pid)}")
        return p
