# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""Text to columns and back, compiled: the lines of a Binance recording (`scan_binance`), the
rows of a CSV file (`scan_csv`) and a tape's columns as CSV text (`format_csv`).

Decimal numbers are read exactly, as an integer mantissa and a count of decimals (value =
mantissa / 10**decimals, trailing zeros dropped), never through a float. A line that does not
scan raises `ScanError` naming its row (0-based, of the text given) and what is wrong; the
readers turn that into the file and line.
"""

import numpy as np

from cpython.exc cimport PyErr_CheckSignals
from libc.string cimport memcmp, memset, strlen
from libc.stdio cimport snprintf
from libcpp.string cimport string
from libcpp.vector cimport vector

from tradearena.envs.data.vectors cimport i64_array, i8_array

ctypedef long long i64
ctypedef signed char i8

__all__ = [
    "BINANCE_DEPTH",
    "BINANCE_OTHER",
    "BINANCE_SNAPSHOT",
    "BINANCE_TICKER",
    "BINANCE_TRADE",
    "CSV_BOOL",
    "CSV_DECIMAL",
    "CSV_ENUM",
    "CSV_INT",
    "CSV_SAME",
    "CSV_SKIP",
    "ScanError",
    "format_csv",
    "scan_binance",
    "scan_csv",
]

cdef i64 I64_MAX = 9223372036854775807
cdef int MAX_DECIMALS = 18
cdef int MAX_DEPTH = 64  # nesting of JSON values skipped
cdef Py_ssize_t SIGNAL_EVERY = 65536  # lines read between two looks for an interrupt (Ctrl-C)

cdef enum:
    # message kinds of a Binance recording
    DEPTH = 1
    TRADE = 2
    TICKER = 3
    SNAPSHOT = 4
    OTHER = 5

BINANCE_DEPTH, BINANCE_TRADE, BINANCE_TICKER, BINANCE_SNAPSHOT, BINANCE_OTHER = (
    DEPTH, TRADE, TICKER, SNAPSHOT, OTHER
)
_KIND_NAMES = {SNAPSHOT: "a depth snapshot", DEPTH: "a depthUpdate", TRADE: "a trade"}
_KIND_NAMES[TICKER] = "a bookTicker"

cdef enum:
    # the keys a line of a Binance recording has, one bit each (Line.fields)
    F_STREAM = 1 << 0
    F_DATA = 1 << 1
    F_LAST = 1 << 2
    F_BIDS = 1 << 3
    F_ASKS = 1 << 4
    F_e = 1 << 5
    F_E = 1 << 6
    F_U = 1 << 7
    F_u = 1 << 8
    F_T = 1 << 9
    F_m = 1 << 10
    F_b_levels = 1 << 11  # "b" and "a" as lists of levels (a depth update)
    F_a_levels = 1 << 12
    F_b = 1 << 13  # "b" and "a" as prices (a book ticker)
    F_a = 1 << 14
    F_B = 1 << 15
    F_A = 1 << 16
    F_p = 1 << 17
    F_q = 1 << 18

_FIELD_NAMES = (
    "stream", "data", "lastUpdateId", "bids", "asks", "e", "E", "U", "u", "T", "m", "b", "a", "b",
    "a", "B", "A", "p", "q",
)
# column kinds of a CSV schema
CSV_SKIP, CSV_INT, CSV_DECIMAL, CSV_ENUM, CSV_BOOL, CSV_SAME = 0, 1, 2, 3, 4, 5


class ScanError(Exception):
    """A line of text that does not scan: ``row`` (0-based line of the text scanned),
    ``column`` (0-based field of a CSV row, or -1) and ``reason``."""

    def __init__(self, row: int, column: int, reason: str) -> None:
        super().__init__(reason)
        self.row, self.column, self.reason = row, column, reason


# ------------------------------------------------------------------------------ decimals
cdef enum:
    DEC_OK = 0
    DEC_NOT_A_NUMBER = 1
    DEC_NEGATIVE = 2
    DEC_TOO_LONG = 3

cdef const char* DEC_REASONS[4]
DEC_REASONS[0] = b""
DEC_REASONS[1] = b"is not a decimal number"
DEC_REASONS[2] = b"is negative"
DEC_REASONS[3] = b"is out of range (more than 18 digits)"


cdef int parse_decimal(const char* s, Py_ssize_t n, i64* mantissa, int* decimals) noexcept:
    """Read ``s[:n]`` ([+]digits[.digits][e[+-]digits]) exactly: mantissa / 10**decimals with
    no trailing zeros; a DEC_ code."""
    cdef Py_ssize_t i = 0
    cdef i64 m = 0
    cdef int digits = 0, frac = 0, exp = 0, exp_sign = 1, exp_digits = 0, d
    cdef bint dot = False
    if n > 0 and s[0] == b'-':
        return DEC_NEGATIVE
    if n > 0 and s[0] == b'+':
        i += 1
    while i < n:
        if b'0' <= s[i] <= b'9':
            d = s[i] - 48
            if m > (I64_MAX - d) // 10:
                return DEC_TOO_LONG
            m = m * 10 + d
            digits += 1
            frac += dot
        elif s[i] == b'.' and not dot:
            dot = True
        else:
            break
        i += 1
    if digits == 0:
        return DEC_NOT_A_NUMBER
    if i < n and (s[i] == b'e' or s[i] == b'E'):
        i += 1
        if i < n and (s[i] == b'+' or s[i] == b'-'):
            exp_sign = -1 if s[i] == b'-' else 1
            i += 1
        while i < n and b'0' <= s[i] <= b'9' and exp_digits < 4:
            exp = exp * 10 + (s[i] - 48)
            exp_digits += 1
            i += 1
        if exp_digits == 0:
            return DEC_NOT_A_NUMBER
    if i != n:
        return DEC_NOT_A_NUMBER
    frac -= exp_sign * exp
    if m == 0:
        frac = 0
    while frac > 0 and m % 10 == 0:
        m //= 10
        frac -= 1
    while frac < 0:
        if m > I64_MAX // 10:
            return DEC_TOO_LONG
        m *= 10
        frac += 1
    if frac > MAX_DECIMALS:
        return DEC_TOO_LONG
    mantissa[0] = m
    decimals[0] = frac
    return DEC_OK


cdef int parse_integer(const char* s, Py_ssize_t n, i64* out) noexcept:
    """Read ``s[:n]`` as [-]digits into ``out``; 0, or -1 when it is not an int64."""
    cdef Py_ssize_t i = 0
    cdef i64 v = 0
    cdef int d
    cdef bint negative = n > 0 and s[0] == b'-'
    i += negative
    if i == n:
        return -1
    while i < n:
        if not b'0' <= s[i] <= b'9':
            return -1
        d = s[i] - 48
        if v > (I64_MAX - d) // 10:
            return -1
        v = v * 10 + d
        i += 1
    out[0] = -v if negative else v
    return 0


# --------------------------------------------------------------------------- JSON lines
cdef struct Cursor:
    const char* s
    Py_ssize_t i
    Py_ssize_t end
    const char* error  # why the line does not scan (a static string), or NULL
    Py_ssize_t bad_at  # a decimal that does not read: its text, [bad_at, bad_at + bad_n)
    Py_ssize_t bad_n


cdef inline void ws(Cursor* c) noexcept:
    while c.i < c.end and (c.s[c.i] == b' ' or c.s[c.i] == b'\t' or c.s[c.i] == b'\r'):
        c.i += 1


cdef inline int fail(Cursor* c, const char* why) noexcept:
    if c.error == NULL:
        c.error = why
    return -1


cdef inline int expect(Cursor* c, char ch, const char* why) noexcept:
    ws(c)
    if c.i >= c.end or c.s[c.i] != ch:
        return fail(c, why)
    c.i += 1
    return 0


cdef int string_span(Cursor* c, Py_ssize_t* start, Py_ssize_t* n) noexcept:
    """A JSON string's raw text (escapes kept) as [start, start + n)."""
    ws(c)
    if c.i >= c.end or c.s[c.i] != b'"':
        return fail(c, b"not valid JSON (expected a string)")
    c.i += 1
    start[0] = c.i
    while c.i < c.end and c.s[c.i] != b'"':
        c.i += 2 if c.s[c.i] == b'\\' else 1
    if c.i >= c.end:
        return fail(c, b"not valid JSON (a string is not closed)")
    n[0] = c.i - start[0]
    c.i += 1
    return 0


cdef int number_span(Cursor* c, Py_ssize_t* start, Py_ssize_t* n) noexcept:
    ws(c)
    start[0] = c.i
    while c.i < c.end and (
        b'0' <= c.s[c.i] <= b'9' or c.s[c.i] == b'-' or c.s[c.i] == b'+' or c.s[c.i] == b'.'
        or c.s[c.i] == b'e' or c.s[c.i] == b'E'
    ):
        c.i += 1
    n[0] = c.i - start[0]
    if n[0] == 0:
        return fail(c, b"not valid JSON (expected a value)")
    return 0


cdef int literal(Cursor* c, const char* word) noexcept:
    cdef Py_ssize_t n = strlen(word)
    if c.end - c.i < n or memcmp(c.s + c.i, word, n) != 0:
        return fail(c, b"not valid JSON (expected a value)")
    c.i += n
    return 0


cdef int skip_value(Cursor* c, int depth) noexcept:
    """Step over one JSON value of any kind."""
    cdef Py_ssize_t a, b
    if depth > MAX_DEPTH:
        return fail(c, b"JSON nested too deeply")
    ws(c)
    if c.i >= c.end:
        return fail(c, b"not valid JSON (the line ends inside a value)")
    cdef char ch = c.s[c.i]
    if ch == b'"':
        return string_span(c, &a, &b)
    if ch == b't':
        return literal(c, b"true")
    if ch == b'f':
        return literal(c, b"false")
    if ch == b'n':
        return literal(c, b"null")
    if ch == b'{' or ch == b'[':
        c.i += 1
        ws(c)
        if c.i < c.end and c.s[c.i] == (b'}' if ch == b'{' else b']'):
            c.i += 1
            return 0
        while True:
            if ch == b'{':
                if string_span(c, &a, &b) or expect(c, b':', b"not valid JSON (expected ':')"):
                    return -1
            if skip_value(c, depth + 1):
                return -1
            ws(c)
            if c.i < c.end and c.s[c.i] == b',':
                c.i += 1
                continue
            return expect(
                c, b'}' if ch == b'{' else b']', b"not valid JSON (expected ',' or a close)"
            )
    return number_span(c, &a, &b)


cdef int int_value(Cursor* c, i64* out, const char* why) noexcept:
    cdef Py_ssize_t a, n
    if number_span(c, &a, &n) or parse_integer(c.s + a, n, out):
        c.error = NULL
        return fail(c, why)
    return 0


cdef int decimal_value(Cursor* c, i64* m, int* d, const char** why) noexcept:
    """A decimal given as a JSON string or number; on failure ``why`` says what is wrong."""
    cdef Py_ssize_t a, n
    cdef int code
    ws(c)
    if c.i < c.end and c.s[c.i] == b'"':
        if string_span(c, &a, &n):
            return -1
    elif number_span(c, &a, &n):
        return -1
    code = parse_decimal(c.s + a, n, m, d)
    if code:
        why[0] = DEC_REASONS[code]
        c.bad_at, c.bad_n = a, n
        return fail(c, b"a price or quantity")
    return 0


cdef inline bint is_key(Cursor* c, Py_ssize_t a, Py_ssize_t n, const char* key) noexcept:
    return n == <Py_ssize_t>strlen(key) and memcmp(c.s + a, key, n) == 0


cdef struct Line:
    # what one line of a Binance recording holds
    int fields  # the F_ bits of the keys it has
    Py_ssize_t stream_at, stream_n, e_at, e_n, s_at, s_n
    i64 last, E, U, u, T
    bint m
    i64 p_m, q_m
    int p_d, q_d


cdef class _Levels:
    cdef vector[i64] price_m, qty_m
    cdef vector[i8] side, price_d, qty_d

    cdef int pairs(self, Cursor* c, signed char side, const char** why) noexcept:
        """An array of [price, qty] arrays (more values in a pair are skipped)."""
        cdef i64 pm, qm
        cdef int pd, qd
        if expect(c, b'[', b"a list of levels is not a JSON array"):
            return -1
        ws(c)
        if c.i < c.end and c.s[c.i] == b']':
            c.i += 1
            return 0
        while True:
            if expect(c, b'[', b"a level is not a [price, quantity] array"):
                return -1
            if decimal_value(c, &pm, &pd, why):
                return -1
            if expect(c, b',', b"a level is not a [price, quantity] array"):
                return -1
            if decimal_value(c, &qm, &qd, why):
                return -1
            ws(c)
            while c.i < c.end and c.s[c.i] == b',':
                c.i += 1
                if skip_value(c, 1):
                    return -1
                ws(c)
            if expect(c, b']', b"a level is not a [price, quantity] array"):
                return -1
            self.add(side, pm, pd, qm, qd)
            ws(c)
            if c.i < c.end and c.s[c.i] == b',':
                c.i += 1
                continue
            return expect(c, b']', b"not valid JSON (expected ',' or ']')")

    cdef inline void add(self, signed char side, i64 pm, int pd, i64 qm, int qd) noexcept:
        self.side.push_back(side)
        self.price_m.push_back(pm)
        self.price_d.push_back(pd)
        self.qty_m.push_back(qm)
        self.qty_d.push_back(qd)

    cdef void truncate(self, size_t n) noexcept:
        self.side.resize(n)
        self.price_m.resize(n)
        self.price_d.resize(n)
        self.qty_m.resize(n)
        self.qty_d.resize(n)


ctypedef int (*KeyReader)(
    Cursor* c, Py_ssize_t a, Py_ssize_t n, Line* line, _Levels levels, const char** why
) noexcept


cdef int read_object(
    Cursor* c, KeyReader read_key, Line* line, _Levels levels, const char** why,
    const char* not_an_object,
) noexcept:
    """A JSON object, each key [a, a + n) and its value read by ``read_key``."""
    cdef Py_ssize_t a, n
    if expect(c, b'{', not_an_object):
        return -1
    ws(c)
    if c.i < c.end and c.s[c.i] == b'}':
        c.i += 1
        return 0
    while True:
        if string_span(c, &a, &n) or expect(c, b':', b"not valid JSON (expected ':')"):
            return -1
        if read_key(c, a, n, line, levels, why) or c.error != NULL:
            return -1
        ws(c)
        if c.i < c.end and c.s[c.i] == b',':
            c.i += 1
            continue
        return expect(c, b'}', b"not valid JSON (expected ',' or '}')")


cdef int data_key(
    Cursor* c, Py_ssize_t a, Py_ssize_t n, Line* line, _Levels levels, const char** why
) noexcept:
    """A key of the ``data`` object of a combined-stream message; unknown keys are skipped."""
    cdef i64 size_m  # a ticker's sizes: read to check them, not kept
    cdef int size_d
    if is_key(c, a, n, b"e"):
        if string_span(c, &line.e_at, &line.e_n):
            return -1
        line.fields |= F_e
    elif is_key(c, a, n, b"E"):
        int_value(c, &line.E, b'"E" is not an integer (ms)')
        line.fields |= F_E
    elif is_key(c, a, n, b"U"):
        int_value(c, &line.U, b'"U" is not an integer')
        line.fields |= F_U
    elif is_key(c, a, n, b"u"):
        int_value(c, &line.u, b'"u" is not an integer')
        line.fields |= F_u
    elif is_key(c, a, n, b"T"):
        int_value(c, &line.T, b'"T" is not an integer (ms)')
        line.fields |= F_T
    elif is_key(c, a, n, b"s"):
        if string_span(c, &line.s_at, &line.s_n):
            return -1
    elif is_key(c, a, n, b"m"):
        ws(c)
        if c.i < c.end and c.s[c.i] == b't':
            line.m = True
            if literal(c, b"true"):
                return -1
        elif literal(c, b"false"):
            c.error = NULL
            return fail(c, b'"m" is not true or false')
        line.fields |= F_m
    elif is_key(c, a, n, b"b") or is_key(c, a, n, b"a"):
        ws(c)
        if c.i < c.end and c.s[c.i] == b'[':
            if levels.pairs(c, 1 if c.s[a] == b'b' else -1, why):
                return -1
            if c.s[a] == b'b':
                line.fields |= F_b_levels
            else:
                line.fields |= F_a_levels
        elif c.s[a] == b'b':
            decimal_value(c, &line.p_m, &line.p_d, why)
            line.fields |= F_b
        else:
            decimal_value(c, &line.q_m, &line.q_d, why)
            line.fields |= F_a
    elif is_key(c, a, n, b"B") or is_key(c, a, n, b"A"):
        if decimal_value(c, &size_m, &size_d, why):
            return -1
        line.fields |= F_B if c.s[a] == b'B' else F_A
    elif is_key(c, a, n, b"p"):
        decimal_value(c, &line.p_m, &line.p_d, why)
        line.fields |= F_p
    elif is_key(c, a, n, b"q"):
        decimal_value(c, &line.q_m, &line.q_d, why)
        line.fields |= F_q
    elif skip_value(c, 1):
        return -1
    return 0


cdef int top_key(
    Cursor* c, Py_ssize_t a, Py_ssize_t n, Line* line, _Levels levels, const char** why
) noexcept:
    """A key of a line's message; unknown keys are skipped."""
    if is_key(c, a, n, b"stream"):
        if string_span(c, &line.stream_at, &line.stream_n):
            return -1
        line.fields |= F_STREAM
    elif is_key(c, a, n, b"data"):
        if read_object(c, data_key, line, levels, why, b'"data" is not a JSON object'):
            return -1
        line.fields |= F_DATA
    elif is_key(c, a, n, b"lastUpdateId"):
        int_value(c, &line.last, b'"lastUpdateId" is not an integer')
        line.fields |= F_LAST
    elif is_key(c, a, n, b"bids"):
        if levels.pairs(c, 1, why):
            return -1
        line.fields |= F_BIDS
    elif is_key(c, a, n, b"asks"):
        if levels.pairs(c, -1, why):
            return -1
        line.fields |= F_ASKS
    elif skip_value(c, 1):
        return -1
    return 0


cdef int read_message(Cursor* c, Line* line, _Levels levels, const char** why) noexcept:
    """The JSON message of a line, nothing after it."""
    if read_object(c, top_key, line, levels, why, b"the message is not a JSON object"):
        return -1
    ws(c)
    if c.i != c.end:
        return fail(c, b"text after the JSON message")
    return 0


cdef inline bint span_is(const char* s, Py_ssize_t a, Py_ssize_t n, const char* word) noexcept:
    return n == <Py_ssize_t>strlen(word) and memcmp(s + a, word, n) == 0


cdef inline bint span_ends(const char* s, Py_ssize_t a, Py_ssize_t n, const char* tail) noexcept:
    cdef Py_ssize_t k = strlen(tail)
    return n >= k and memcmp(s + a + n - k, tail, k) == 0


cdef int _message_kind(const char* s, Line* line) noexcept:
    """A snapshot has "lastUpdateId"; a stream message's "data" says depthUpdate or trade by
    its "e", a bookTicker by its stream name (or "b" and "a" prices without "e")."""
    cdef bint has_e = line.fields & F_e
    if line.fields & F_LAST:
        return SNAPSHOT
    if not line.fields & F_DATA:
        return OTHER
    if has_e and span_is(s, line.e_at, line.e_n, b"depthUpdate"):
        return DEPTH
    if has_e and span_is(s, line.e_at, line.e_n, b"trade"):
        return TRADE
    if span_ends(s, line.stream_at, line.stream_n, b"@bookTicker") or (
        not has_e and line.fields & F_b and line.fields & F_a
    ):
        return TICKER
    return OTHER


cdef int _required(int kind) noexcept:
    """The F_ bits a message of ``kind`` must have."""
    if kind == SNAPSHOT:
        return F_LAST | F_BIDS | F_ASKS
    if kind == DEPTH:
        return F_E | F_U | F_u | F_b_levels | F_a_levels
    if kind == TRADE:
        return F_p | F_q | F_T | F_m
    if kind == TICKER:
        return F_u | F_b | F_B | F_a | F_A
    return 0


def _missing(int kind, int lacks) -> str:
    """What a message of ``kind`` that lacks the F_ bits ``lacks`` is missing."""
    name = _FIELD_NAMES[(lacks & -lacks).bit_length() - 1]
    return f'{_KIND_NAMES[kind]} without "{name}"'


def scan_binance(bytes text not None):
    """The lines of a Binance recording (``<receive time, ns since the epoch> <JSON>``) as
    columns: a dict of numpy arrays ``kind`` (BINANCE_*), ``row`` (0-based line), ``recv``
    (ns), ``time`` (ms: a depth update's E, a trade's T), ``first`` / ``last`` (a depth
    update's U / u; a snapshot's lastUpdateId in ``last``), ``maker`` (a trade's resting side,
    +1 bid when the buyer is the maker, else -1) and ``start`` / ``stop`` (its levels' rows),
    and per level ``side`` (+1 bid, -1 ask), ``price_m`` / ``price_d`` / ``qty_m`` / ``qty_d``
    (decimal mantissas and decimals); a trade's price and quantity are one level, on the maker's
    side. ``symbol``: the first symbol named (bytes, or None). Raises `ScanError`."""
    cdef const char* s = text
    cdef Py_ssize_t size = len(text), at = 0, stop, row = 0
    cdef vector[i8] kind, maker
    cdef vector[i64] rows, recv, times, firsts, lasts, starts, stops
    cdef _Levels levels = _Levels()
    cdef Line line
    cdef Cursor c
    cdef const char* why
    cdef i64 received
    cdef size_t level0
    cdef int k
    cdef Py_ssize_t sym_at = -1, sym_n = 0
    while at < size:
        stop = at
        while stop < size and s[stop] != b'\n':
            stop += 1
        c.s, c.i, c.end = s, at, stop
        c.error = NULL
        why = b""
        if stop == at or (stop == at + 1 and s[at] == b'\r'):
            raise ScanError(row, -1, "empty line")
        while c.i < stop and s[c.i] != b' ':
            c.i += 1
        if parse_integer(s + at, c.i - at, &received) or received < 0 or c.i == stop:
            raise ScanError(
                row, -1, "does not start with the receive time (ns since the epoch) and a space"
            )
        c.i += 1
        memset(&line, 0, sizeof(Line))
        level0 = levels.side.size()
        read_message(&c, &line, levels, &why)
        if c.error != NULL:
            reason = (<bytes>c.error).decode()
            if why[0]:
                bad = bytes(text[c.bad_at:c.bad_at + c.bad_n]).decode("utf-8", "replace")
                reason = f"{reason} {bad!r} {(<bytes>why).decode()}"
            raise ScanError(row, -1, f"{reason} (at column {c.i - at + 1})")
        k = _message_kind(s, &line)
        if line.fields & _required(k) != _required(k):
            raise ScanError(row, -1, _missing(k, _required(k) & ~line.fields))
        if k == DEPTH and line.U > line.u:
            raise ScanError(row, -1, f'a depthUpdate with "U" {line.U} after "u" {line.u}')
        if k != DEPTH and k != SNAPSHOT:
            levels.truncate(level0)
        if k == TRADE:
            levels.add(1 if line.m else -1, line.p_m, line.p_d, line.q_m, line.q_d)
        if line.fields & F_DATA and line.s_n and k != OTHER:
            if sym_at < 0:
                sym_at, sym_n = line.s_at, line.s_n
            elif line.s_n != sym_n or memcmp(s + line.s_at, s + sym_at, sym_n) != 0:
                raise ScanError(
                    row, -1,
                    f"symbol {bytes(text[line.s_at:line.s_at + line.s_n]).decode()!r}, but the "
                    f"recording began with {bytes(text[sym_at:sym_at + sym_n]).decode()!r}",
                )
        kind.push_back(k)
        rows.push_back(row)
        recv.push_back(received)
        times.push_back(line.E if k == DEPTH else line.T if k == TRADE else 0)
        firsts.push_back(line.U if k == DEPTH else 0)
        lasts.push_back(line.last if k == SNAPSHOT else line.u)
        maker.push_back((1 if line.m else -1) if k == TRADE else 0)
        starts.push_back(level0)
        stops.push_back(levels.side.size())
        at = stop + 1
        row += 1
        if row % SIGNAL_EVERY == 0:
            PyErr_CheckSignals()  # an interrupt raises here
    return {
        "kind": i8_array(kind),
        "row": i64_array(rows),
        "recv": i64_array(recv),
        "time": i64_array(times),
        "first": i64_array(firsts),
        "last": i64_array(lasts),
        "maker": i8_array(maker),
        "start": i64_array(starts),
        "stop": i64_array(stops),
        "side": i8_array(levels.side),
        "price_m": i64_array(levels.price_m),
        "price_d": i8_array(levels.price_d),
        "qty_m": i64_array(levels.qty_m),
        "qty_d": i8_array(levels.qty_d),
        "symbol": None if sym_at < 0 else bytes(text[sym_at:sym_at + sym_n]),
    }


# ------------------------------------------------------------------------------- CSV rows
def scan_csv(bytes text not None, Py_ssize_t start, list kinds, list enums):
    """The rows of CSV ``text`` from byte ``start`` (after the header) as columns: one entry
    per column of ``kinds`` (CSV_*): None (SKIP), an int64 array (INT), a (mantissa int64,
    decimals int8) pair (DECIMAL), an int8 array of indexes into ``enums[column]`` (ENUM, a
    list of bytes), an int8 array of 0 / 1 (BOOL: false / true, any case), or the text of the
    first row (SAME: every row must hold it). No quoting; a trailing newline and ``\\r\\n``
    line ends are allowed. Raises `ScanError` (row 0 is the first row after ``start``)."""
    cdef const char* s = text
    cdef Py_ssize_t size = len(text), at = start, stop, end, row = 0, col, a, n
    cdef Py_ssize_t ncols = len(kinds), j
    cdef vector[int] kind
    cdef vector[vector[string]] words = vector[vector[string]](ncols)
    for col in range(ncols):
        kind.push_back(kinds[col])
        if kinds[col] == CSV_ENUM:
            for word in enums[col]:
                words[col].push_back(word)
    cdef vector[vector[i64]] ints = vector[vector[i64]](ncols)
    cdef vector[vector[i8]] small = vector[vector[i8]](ncols)
    cdef vector[Py_ssize_t] same_at = vector[Py_ssize_t](ncols, -1)
    cdef vector[Py_ssize_t] same_n = vector[Py_ssize_t](ncols, 0)
    cdef i64 value, m
    cdef int d, code
    while at < size:
        stop = at
        while stop < size and s[stop] != b'\n':
            stop += 1
        end = stop - 1 if stop > at and s[stop - 1] == b'\r' else stop
        if end == at:
            raise ScanError(row, -1, "empty line")
        a = at
        for col in range(ncols):
            n = a
            while n < end and s[n] != b',':
                n += 1
            if col < ncols - 1 and n == end:
                raise ScanError(row, -1, f"{col + 1} field(s), expected {ncols}")
            n -= a
            if kind[col] == CSV_INT:
                if parse_integer(s + a, n, &value):
                    raise ScanError(row, col, f"{_field(s, a, n)!r} is not an integer")
                ints[col].push_back(value)
            elif kind[col] == CSV_DECIMAL:
                code = parse_decimal(s + a, n, &m, &d)
                if code:
                    reason = (<bytes>DEC_REASONS[code]).decode()
                    raise ScanError(row, col, f"{_field(s, a, n)!r} {reason}")
                ints[col].push_back(m)
                small[col].push_back(d)
            elif kind[col] == CSV_ENUM:
                for j in range(<Py_ssize_t>words[col].size()):
                    if <Py_ssize_t>words[col][j].size() == n and (
                        memcmp(s + a, words[col][j].data(), n) == 0
                    ):
                        small[col].push_back(j)
                        break
                else:
                    allowed = " or ".join(w.decode() for w in enums[col])
                    raise ScanError(row, col, f"{_field(s, a, n)!r} is not {allowed}")
            elif kind[col] == CSV_BOOL:
                if n == 4 and _lower_is(s + a, b"true"):
                    small[col].push_back(1)
                elif n == 5 and _lower_is(s + a, b"false"):
                    small[col].push_back(0)
                else:
                    raise ScanError(row, col, f"{_field(s, a, n)!r} is not true or false")
            elif kind[col] == CSV_SAME:
                if same_at[col] < 0:
                    same_at[col], same_n[col] = a, n
                elif n != same_n[col] or memcmp(s + a, s + same_at[col], n) != 0:
                    first = _field(s, same_at[col], same_n[col])
                    raise ScanError(
                        row, col, f"{_field(s, a, n)!r}, but the file began with {first!r}"
                    )
            a += n + 1
        if a <= end:
            raise ScanError(row, -1, f"more than {ncols} fields")
        at = stop + 1
        row += 1
        if row % SIGNAL_EVERY == 0:
            PyErr_CheckSignals()  # an interrupt raises here
    out = []
    for col in range(ncols):
        if kind[col] == CSV_INT:
            out.append(i64_array(ints[col]))
        elif kind[col] == CSV_DECIMAL:
            out.append((i64_array(ints[col]), i8_array(small[col])))
        elif kind[col] in (CSV_ENUM, CSV_BOOL):
            out.append(i8_array(small[col]))
        elif kind[col] == CSV_SAME:
            out.append(None if same_at[col] < 0 else _field(s, same_at[col], same_n[col]))
        else:
            out.append(None)
    return out


cdef str _field(const char* s, Py_ssize_t a, Py_ssize_t n):
    return s[a:a + n].decode("utf-8", "replace")


cdef bint _lower_is(const char* s, const char* word) noexcept:
    cdef Py_ssize_t i
    for i in range(strlen(word)):
        if (s[i] | 0x20) != word[i]:
            return False
    return True


# ------------------------------------------------------------------------------- writing
cdef inline Py_ssize_t _put_int(char* out, i64 v) noexcept nogil:
    cdef char digits[24]
    cdef Py_ssize_t n = 0, k = 0
    cdef unsigned long long u
    if v < 0:
        out[k] = b'-'
        k += 1
        u = <unsigned long long>(-(v + 1)) + 1
    else:
        u = <unsigned long long>v
    while True:
        digits[n] = 48 + <char>(u % 10)
        n += 1
        u //= 10
        if u == 0:
            break
    while n:
        n -= 1
        out[k] = digits[n]
        k += 1
    return k


def format_csv(const double[::1] time, int decimals, const i64[:, ::1] table not None) -> bytes:
    """CSV text, one line per row of ``table`` (int64, (n, k)): the row's integers, after
    ``time[i]`` written with ``decimals`` decimals when ``time`` is given (not None)."""
    cdef Py_ssize_t n = table.shape[0], k = table.shape[1], i, j, at = 0
    cdef bint timed = time is not None
    if timed and time.shape[0] != n:
        raise ValueError(f"{time.shape[0]} times for {n} rows")
    cdef bytearray buffer = bytearray(n * (k * 21 + 48) + 1)
    cdef char* out = buffer
    with nogil:
        for i in range(n):
            if timed:
                at += snprintf(out + at, 48, "%.*f,", decimals, time[i])
            for j in range(k):
                at += _put_int(out + at, table[i, j])
                out[at] = b','
                at += 1
            if k:
                at -= 1
            out[at] = b'\n'
            at += 1
    return bytes(buffer[:at])
