"""The websocket protocol: what a browser may send, and every frame the server may send back.

Both directions are closed pydantic models (`extra="forbid"`). Outgoing frames name channels by
per-viewer aliases ("A", "B") and senders only as "you", "them" or "game", so no seat id, agent
name, prompt or side can reach a client unless a frame type says so — and only `Reveal`, sent
after the verdict, carries identities. That makes "nothing leaks" a property one can check by
recording frames and searching them (tests/arena/core/test_arena_leaks.py).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


InputId = Field(default=None, min_length=1, max_length=40)  # chosen by the client, for resends


class _Sequenced(_Frame):
    """A frame of a participant's game stream (arena/core/resume.py): `stream` names the stream
    (new whenever the view is built, so also on a takeover's new owner) and `seq` numbers the
    frames a game sent this viewer in it, so a reconnecting client says the last one it saw and
    gets the rest, and a page never mistakes a new owner's frames for ones it has (protocol.js).
    `ref` names the client input (its `id`) the frame answers. Each is left out when unset, so
    frames without them read exactly as before."""

    seq: int | None = None
    ref: str | None = None
    stream: str | None = None

    @model_serializer(mode="wrap")
    def _without_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("seq", "ref", "stream"):
            if data.get(key) is None:
                data.pop(key, None)
        if data.get("snapshot") is False:  # only a whole state sent as a snapshot says so
            del data["snapshot"]
        return data


class WholeState(_Sequenced):
    """A frame that is a viewer's whole state, sent again whenever it changes (the STT, the
    GTT, the ITT chat: mode_kits' `state_frame`). Each is a frame of the viewer's stream, so a
    page keeps its place and resumes as in the chat games (protocol.js). `snapshot` marks the
    state sent on (re)connect or to a resume whose frames are no longer kept: like a "game"
    frame it replaces what the page has and says, by its `stream`/`seq`, where the stream
    stands (a new stream: a takeover's new owner); the others are stream frames in `seq`
    order. The newest state supersedes every frame before it (resume.Outbox keeps none)."""

    snapshot: bool = False


# ---- browser -> server ---------------------------------------------------------------------


class Join(_Frame):
    type: Literal["join"]
    mode: str = Field(max_length=40)
    consent: bool


class SendMessage(_Frame):
    type: Literal["message"]
    id: str | None = InputId  # applied once, however often it is re-sent
    after: int | None = Field(default=None, ge=0)  # messages the client had when it sent it
    channel: str = Field(max_length=8)
    text: str = Field(min_length=1, max_length=2000)  # the game's own limit is checked later
    image: str | None = Field(default=None, max_length=40)  # an upload id (POST /arena/image)


class Typing(_Frame):
    type: Literal["typing"]
    channel: str = Field(max_length=8)


class Verdict(_Frame):
    type: Literal["verdict"]
    id: str | None = InputId
    choice: str = Field(max_length=8)  # a channel alias (three-party) or "human"/"ai"
    confidence: int = Field(ge=0, le=100)
    reason: str = Field(default="", max_length=1000)


class EndGame(_Frame):
    type: Literal["end"]
    id: str | None = InputId


class Survey(_Frame):
    type: Literal["survey"]
    answers: dict[str, str | int | None]


class Leave(_Frame):
    type: Literal["leave"]


class Preference(_Frame):
    """Strong Turing Test: the investigator prefers reply number `reply`, or declares a tie."""

    type: Literal["preference"]
    id: str | None = InputId
    reply: int | None = Field(default=None, ge=1, le=9)
    tie: bool = False


class Resume(_Frame):
    """After a gap in `seq` (or on reconnect): send me the frames of `game` after `seq`."""

    type: Literal["resume"]
    game: str = Field(max_length=40)
    stream: str = Field(max_length=40)
    seq: int = Field(ge=0)


class Ping(_Frame):
    """A client heartbeat; the process holding the socket answers `pong` at once."""

    type: Literal["ping"]


ClientFrame = Annotated[
    Join | SendMessage | Typing | Verdict | EndGame | Survey | Leave | Preference | Resume | Ping,
    Field(discriminator="type"),
]
_CLIENT = TypeAdapter(ClientFrame)


class BadFrame(ValueError):
    """A client frame that is not valid JSON or not one of the known kinds."""


def parse_client_frame(raw: str) -> ClientFrame:
    try:
        return _CLIENT.validate_json(raw)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "frame"
        raise BadFrame(f"{where}: {first['msg']}") from None


# ---- server -> browser ---------------------------------------------------------------------

Sender = Literal["you", "them", "game"]


class Message(_Sequenced):
    type: Literal["message"] = "message"
    n: int  # position in this viewer's own transcript (not the table's: gaps would leak)
    channel: str
    sender: Sender
    text: str
    at: float


class TypingShown(_Sequenced):
    type: Literal["typing"] = "typing"
    channel: str


class Phase(_Sequenced):
    type: Literal["phase"] = "phase"
    phase: Literal["playing", "verdict", "ended"]


class Side(_Frame):
    channel: str
    kind: Literal["human", "ai"]
    name: str  # "a person", or the AI witness's display name


class Reveal(_Sequenced):
    """Who was who, sent to everybody in the game once it has ended. Channels are named as the
    interrogator saw them; `you` is the viewer's own channel there (None for the interrogator)."""

    type: Literal["reveal"] = "reveal"
    sides: list[Side]
    you: str | None = None
    verdict: str | None = None  # the interrogator's choice, as they gave it
    confidence: int | None = None
    correct: bool | None = None
    flagged: str | None = None  # why the game will not count, in plain words


class Rounds(_Frame):
    """A participant's study rounds: `played` counts the game in progress, if any."""

    played: int
    total: int


class GameSnapshot(_Sequenced):
    """Everything a seat may know right now: sent on (re)connect and when a game starts. It
    replaces what the client had; `stream`/`seq` say which frames it already includes."""

    type: Literal["game"] = "game"
    game: str  # public game id (random; not the trial key, which names agents)
    mode: str
    title: str
    practice: bool  # solo practice against AI witnesses: never study data
    role: Literal["interrogator", "witness"]
    channels: list[str]
    judge_choices: list[str]  # what a verdict may name; empty for witnesses
    speaks_first: bool
    max_chars: int
    now: float
    deadline: float | None
    phase: Literal["playing", "verdict", "ended"]
    messages: list[Message]
    reveal: Reveal | None = None
    rounds: Rounds | None = None  # study games only (never practice)


class ModeInfo(_Frame):
    name: str
    title: str
    practice: bool  # solo practice: AI witnesses only, never study data
    about: str = ""  # one line under the title; the page says what practice means otherwise


StatusState = Literal["idle", "waiting", "no-match", "rounds-done", "survey-saved"]


class Status(_Frame):
    """Where the participant is outside a game."""

    type: Literal["status"] = "status"
    state: StatusState
    modes: list[ModeInfo] = Field(default_factory=list)
    waited_s: float | None = None
    rounds: Rounds | None = None


class Error(_Sequenced):
    type: Literal["error"] = "error"
    code: str
    message: str


class Ack(_Sequenced):
    """An input (`ref`) applied, and what it did committed: the page stops sending it (one
    re-sent after a reconnect is applied once, and acknowledged again)."""

    type: Literal["ack"] = "ack"


class Resumed(_Frame):
    """The answer to a resume: the frames after the client's `seq` have been sent (or a
    snapshot, when they could not be); the client is now current as of `seq`."""

    type: Literal["resumed"] = "resumed"
    game: str
    stream: str
    seq: int


class Pong(_Frame):
    type: Literal["pong"] = "pong"


# ---- Strong Turing Test (arena/modes/strong_mode.py): one frame, the viewer's whole state ------


class StrongReply(_Frame):
    label: int  # shown as "Reply <label>", in the game's seeded order
    text: str
    yours: bool = False  # the viewer wrote it (a respondent knows their own reply)
    author: str | None = None  # only once the game has ended: "a person" or the AI's name
    kind: Literal["human", "ai"] | None = None  # likewise


class StrongTurn(_Frame):
    turn: int
    question: str
    images: list[str]  # the media route's URLs of the images the investigator attached
    your_reply: str | None = None  # a respondent's own reply before the choice
    replies: list[StrongReply] = Field(default_factory=list)  # once the viewer may see them
    decided: bool = False
    chosen: int | None = None  # the label preferred; None with tie=True
    tie: bool = False


class StrongScore(_Frame):
    """A side's win rate at the end: preferred replies count 1, ties ½ (SPEC §3)."""

    name: str
    kind: Literal["human", "ai"]
    you: bool
    wins: float
    turns: int
    win_rate: float | None


class StrongState(WholeState):
    type: Literal["strong"] = "strong"
    game: str
    mode: str
    title: str
    practice: bool
    role: Literal["investigator", "respondent"]
    phase: Literal["asking", "answering", "waiting", "choosing", "verdict", "ended"]
    turns: int  # turns planned (the investigator may end after the first)
    can_end: bool
    max_chars: int
    history: list[StrongTurn]
    scores: list[StrongScore] | None = None  # only once the game has ended
    flagged: str | None = None
    # The live integrative test (arena/modes/live_itt_mode.py) reuses this frame: its two answerers
    # keep fixed names ("A", "B") and the judge ends with a verdict instead of preferences.
    labels: list[str] = Field(default_factory=list)
    outcome: str | None = None
    brief: str | None = None  # the viewer's role instructions, when the game gives any
    rounds: Rounds | None = None  # study sessions only (never practice)


# ---- people in the GTT (arena/modes/gtt_mode.py): one frame, the viewer's whole state ----------

GTTSender = Literal["you", "them", "judge", "unknown", "querier", "specimen"]


class GTTLine(_Frame):
    n: int  # position in this chat as the viewer sees it
    sender: GTTSender  # a person sees "you"/"them"; a spectator the roles
    text: str
    at: float


class GTTChat(_Frame):
    name: Literal["study", "test"]  # study: a fresh specimen of the target; test: the game
    title: str
    lines: list[GTTLine]


class GTTReveal(_Frame):
    """Who X was and what the distinguisher said; only once the game has ended."""

    target: str  # the model the game is about (B)
    unknown: str  # what X really was: the target's name, or "<actor> imitating <target>"
    imitator: bool  # X was the actor
    judge: str  # "you", or the distinguisher's name
    verdict: int | None  # 1: "X is the target", 0: "X is an imitator"; None: no answer
    correct: bool | None
    outcome: str  # one sentence for the viewer
    flagged: str | None = None


class GTTState(WholeState):
    type: Literal["gtt"] = "gtt"
    game: str
    mode: str
    title: str
    practice: bool
    role: Literal["distinguisher", "actor", "spectator"]
    brief: str  # the viewer's task in plain words (never the models' prompts)
    target: str | None  # the model the game is about, when the viewer is told (not the actor)
    phase: Literal["writing", "waiting", "verdict", "watching", "ended"]
    chat: Literal["study", "test"] | None  # where the viewer may write now
    can_stop: bool  # the study chat may be ended now
    can_decide: bool  # the distinguisher may give the verdict now
    turns_left: int | None  # messages the distinguisher may still send
    max_chars: int
    chats: list[GTTChat]
    reveal: GTTReveal | None = None


# ---- people in ITT conversations (arena/modes/itt_chat_mode.py): one frame, the whole state


class ITTChatState(WholeState):
    type: Literal["itt-chat"] = "itt-chat"
    game: str
    mode: str
    title: str
    practice: bool
    topic: str
    you: Literal["A", "B"]  # A writes first
    exchanges: int  # messages in all, A and B alternating
    phase: Literal["writing", "waiting", "ended"]
    max_chars: int
    lines: list[Message]  # sender "you", "them" or "game" (the brief)
    partner: str | None = None  # only once ended: "a person" or "an AI (name)"
    flagged: str | None = None  # why the conversation will not count
    rounds: Rounds | None = None  # study conversations only (never practice)


ServerFrame = (
    Message
    | TypingShown
    | Phase
    | Reveal
    | GameSnapshot
    | Status
    | Error
    | StrongState
    | GTTState
    | ITTChatState
    | Ack
    | Resumed
    | Pong
)


def is_snapshot(frame: ServerFrame) -> bool:
    """Whether `frame` replaces what a page has (a "game" frame, a whole state sent as one):
    never numbered as a frame of the stream, it says where the stream stands."""
    return isinstance(frame, GameSnapshot) or (isinstance(frame, WholeState) and frame.snapshot)


def carries_rounds(frame: ServerFrame) -> bool:
    """Whether `frame` shows the viewer's study rounds (a "game" snapshot, some whole states)."""
    return "rounds" in type(frame).model_fields


def dump(frame: ServerFrame) -> dict[str, Any]:
    return frame.model_dump(mode="json")
