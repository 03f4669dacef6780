"""The shared counters in Redis: every process agrees, in one atomic script run per batch.

The operations a process queues while its previous script run is on the wire travel together in
the next run (one pre-loaded script, ``EVALSHA``, executing them in order), so under load one
round trip serves many requests' admissions and settlements alike, and each check still sees
every addition made before it, by any process. Where a counter has room, admissions and
settlements are served from this process's ``leases`` without a round trip.

Redis Cluster: every script run declares each key it touches in ``KEYS``, and every counter key
carries the whole prefix as its hash tag (``{studio:spend:}rl:...``), so all the keys of a run
live in one slot. The alternative, splitting a run by slot, would spread the counters over the
shards but cannot keep one admission atomic: a call's check spans its key's limits and the
budgets of its key, user and team, which no per-principal tag puts in one slot, and a batch
would cost one round trip per shard instead of one. All counters on one shard is the price;
they are small integers, and one script run serves a whole batch.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

import orjson
from django.conf import settings

from studio.gateway import leases
from studio.gateway.counter_types import EACH, Check, Done, Outcome

logger = logging.getLogger(__name__)


# One script for a whole batch of operations, run atomically in the order they were queued. The
# keys come in KEYS, each operation taking the next ones in order; the rest of the batch is one
# JSON argument (decoding it in Redis costs this process nothing, where encoding dozens of
# arguments one by one cost more than the rest of a request): a list of operations,
# ``["a", limit, need, add, ttl, base, weight, calls, unit, limit, ...]`` (check-and-add, all or
# none; each check takes its counter's key and, when ``weight`` >= 0, its previous window's key) or
# ``["d", delta, ttl, ...]`` (add; one key each). Integers stay exact up to 2^53 (nano-dollars:
# $9M). An admitted check also takes up to ``calls`` more times ``unit`` (what one call adds) for
# the process to hand out itself (``leases``), in whole calls, never more than a
# ``LEASE_SHARE``-th of the room left after it. A check-and-add answers
# ``{refused, value..., previous..., taken...}``.
BATCH = """
local out = {}
local k = 0
for o, op in ipairs(cjson.decode(ARGV[1])) do
  local vals = {}
  if op[1] == 'a' then
    local n = (#op - 1) / 8
    local keys, prevs, found, seens, taken, refused = {}, {}, {}, {}, {}, 0
    for i = 1, n do
      k = k + 1
      keys[i] = KEYS[k]
      prevs[i] = 0
      taken[i] = 0
      if op[i * 8 - 1] >= 0 then
        k = k + 1
        prevs[i] = KEYS[k]
      end
    end
    for i = 1, n do
      local b = 1 + (i - 1) * 8
      local v = redis.call('GET', keys[i])
      found[i] = v ~= false
      if v then v = tonumber(v) else v = op[b + 5] end
      vals[i] = v
      local seen = v
      if prevs[i] ~= 0 then
        local p = tonumber(redis.call('GET', prevs[i]) or 0)
        if p < 0 then p = 0 end
        prevs[i] = p
        seen = v + math.floor(p * op[b + 6])
      end
      seens[i] = seen
      if refused == 0 and op[b + 1] >= 0 and seen + op[b + 2] > op[b + 1] then
        refused = i
      end
    end
    if refused == 0 then
      for i = 1, n do
        local b = 1 + (i - 1) * 8
        local calls, unit = op[b + 7], op[b + 8]
        if calls > 0 and unit > 0 then
          if op[b + 1] >= 0 then
            calls = math.min(calls, math.floor((op[b + 1] - seens[i] - op[b + 2]) / (LEASE_SHARE * unit)))
          end
          if calls > 0 then taken[i] = calls * unit end
        end
        local key, add, ttl = keys[i], op[b + 3] + taken[i], op[b + 4]
        vals[i] = vals[i] + add
        if found[i] then
          redis.call('INCRBY', key, add)
        elseif ttl > 0 then
          redis.call('SET', key, vals[i], 'EX', ttl)
        else
          redis.call('SET', key, vals[i])
        end
      end
    end
    for i = 1, n do
      vals[n + i] = prevs[i]
      vals[2 * n + i] = taken[i]
    end
    table.insert(vals, 1, refused)
  else
    for i = 1, (#op - 1) / 2 do
      local b = 1 + (i - 1) * 2
      k = k + 1
      local key, ttl = KEYS[k], op[b + 2]
      vals[i] = redis.call('INCRBY', key, op[b + 1])
      if ttl > 0 and redis.call('TTL', key) < 0 then redis.call('EXPIRE', key, ttl) end
    end
  end
  out[o] = vals
end
return out
""".replace("LEASE_SHARE", str(leases.SHARE))

SLOT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local count = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {1, count} end
if tonumber(ARGV[2]) >= 0 and count >= tonumber(ARGV[2]) then return {0, count} end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
redis.call('EXPIREAT', KEYS[1], math.ceil(tonumber(ARGV[4])) + 60)
return {1, count + 1}
"""

# The most operations one script run carries (a long script would hold Redis up for everyone).
MAX_BATCH = 256
# How long a settlement (``add_later``) may wait for an admission's script run to ride along with
# before it gets a run of its own: settling is off the response path, and this halves round trips.
SETTLE_DELAY = 0.05

def tagged(prefix: str) -> str:
    """``prefix`` as a Redis Cluster hash tag (kept as it is when it already holds one)."""
    start = prefix.find("{")
    if start >= 0 and prefix.find("}", start + 2) > start:
        return prefix
    return "{" + prefix + "}"


def packed(key: str) -> bytes:
    """``key`` as a RESP bulk string, ready to go into a command."""
    raw = key.encode()
    return b"$%d\r\n%b\r\n" % (len(raw), raw)


class _Op:
    """One queued operation: its keys (packed) and arguments, and who hears the answer."""

    __slots__ = ("spec", "keys", "nkeys", "future", "then")

    def __init__(self, spec: list[str | int | float], keys: list[bytes], future: asyncio.Future | None,
                 then: Done | None) -> None:
        self.spec, self.future, self.then = spec, future, then
        self.keys, self.nkeys = b"".join(keys), len(keys)

    def answer(self, values: list | None, error: BaseException | None) -> None:
        if self.future is not None:
            if self.future.done():
                return
            if error is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(values)
        elif self.then is not None:
            try:
                self.then(None if error is not None else tuple(values or ()))
            except Exception:
                logger.exception("a counter callback failed")


class RedisCounters:
    """Counters in Redis: every operation queued while a script run is on its way goes in the next
    run, so a busy process makes one round trip for many requests (and an idle one, one each)."""

    def __init__(self, url: str, prefix: str) -> None:
        from redis.asyncio import Redis

        from studio.gateway import redis_link

        self.redis = Redis.from_url(url, **settings.REDIS_CONNECTION_OPTIONS)
        self.prefix = tagged(prefix)
        self._batch = self.redis.register_script(BATCH)
        self._slot = self.redis.register_script(SLOT)
        # Script runs go one at a time (one flusher), so they need no pool: one lean connection
        # of their own.
        self._link = redis_link.Link(url, settings.REDIS_CONNECTION_OPTIONS["socket_timeout"])
        self._packed: dict[str, bytes] = {}  # counter name → its key, packed (a minute's worth)
        self._queue: list[_Op] = []
        self._flusher: asyncio.Task | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._leases = leases.Book(settings.STUDIO_COUNTER_LEASE_SECONDS)
        self._sweep: asyncio.TimerHandle | None = None

    def _submit(self, op: _Op) -> None:
        self._queue.append(op)
        if self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(self._flush())

    def _defer(self, op: _Op) -> None:
        """Queue ``op`` for the next script run, which starts within ``SETTLE_DELAY`` at the latest."""
        self._queue.append(op)
        self._defer_start()

    def _defer_start(self) -> None:
        if self._flusher is None and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(SETTLE_DELAY, self._kick)

    def _give_back(self, ended: list[tuple[str, int, int]]) -> None:
        """Queue the units of ended leases to be given back ahead of what waits, whose new
        values (for budget alerts) then count them no more."""
        if ended:
            self._queue.insert(0, self._add_op(ended, None, None))
            self._defer_start()

    def _kick(self) -> None:
        self._timer = None
        if self._queue and self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        ops: list[_Op] = []
        try:
            while self._queue:
                ops, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
                try:
                    results = await self._run(ops)
                except Exception as exc:
                    for op in ops:
                        op.answer(None, exc)
                else:
                    for op, values in zip(ops, results, strict=True):
                        op.answer(values, None)
                ops = []
        except BaseException as exc:  # cancelled with the loop: nobody waits forever
            for op in ops + self._queue:
                op.answer(None, ConnectionError(f"counter batch interrupted: {exc!r}"))
            self._queue = []
            raise
        finally:
            self._flusher = None

    def _command(self, ops: list[_Op]) -> bytes:
        """``EVALSHA`` of the batch script over ``ops``, packed as Redis reads it (built here in
        one go: the client's generic packing costs more per key than the rest of an admission)."""
        payload = orjson.dumps([op.spec for op in ops])
        nkeys = sum(op.nkeys for op in ops)
        count = str(nkeys).encode()
        return b"".join((b"*%d\r\n$7\r\nEVALSHA\r\n$40\r\n%b\r\n$%d\r\n%b\r\n"
                         % (nkeys + 4, self._batch.sha.encode(), len(count), count),
                         *(op.keys for op in ops), b"$%d\r\n%b\r\n" % (len(payload), payload)))

    async def _run(self, ops: list[_Op]) -> list:
        """One run of the batch script on the flusher's connection (loading it once if Redis
        does not know it yet)."""
        command = self._command(ops)
        try:
            return await self._link.call(command)
        except self._link.NoScript:
            await self._link.call(self._link.pack("SCRIPT", "LOAD", self._batch.script))
            return await self._link.call(command)

    def _key(self, name: str) -> bytes:
        found = self._packed.get(name)
        if found is None:
            if len(self._packed) >= 4096:  # counters are named after their minute or period
                self._packed.clear()
            found = self._packed[name] = packed(self.prefix + name)
        return found

    def take(self, keys: tuple[str, ...], limits: Sequence[int], amounts: Sequence[int],
             kinds: Sequence[int] = EACH) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        book = self._leases
        return book.take(keys, limits, amounts, kinds) if book.held else None

    def add_held(self, keys: tuple[str, ...], deltas: Sequence[int],
                 kinds: Sequence[int] = EACH) -> tuple[int, ...] | None:
        book = self._leases
        return book.settle(keys, deltas, kinds) if book.held else None

    async def apply(self, checks: Sequence[Check]) -> Outcome:
        book = self._leases
        if book.held or book.asking:
            served = book.serve(checks)
            while served is None:  # a lease is on its way: wait for it, not a round trip of our own
                coming = book.coming([c.key for c in checks])
                if coming is None:
                    break
                await asyncio.shield(coming)
                served = book.serve(checks)
            if served is not None:
                return Outcome(-1, *served)
        keys = [c.key for c in checks]
        limits = [c.limit for c in checks]
        folded = book.fold(keys)
        asked: list[str] = []
        answer = asyncio.get_running_loop().create_future()
        spec: list[str | int | float] = ["a"]
        packed_keys: list[bytes] = []
        known = self._packed
        for c, lease in zip(checks, folded, strict=True):
            held = lease.left if lease is not None else 0  # counted already: this run uses it first
            want = 0
            if c.add > 0 and book.ask(c.key, answer):
                want = leases.CALLS
                asked.append(c.key)
            packed_keys.append(known.get(c.key) or self._key(c.key))
            if c.previous:
                packed_keys.append(known.get(c.previous) or self._key(c.previous))
                spec += [c.limit, c.need - held, c.add - held, c.ttl, c.base, c.weight, want, c.add]
            else:
                spec += [c.limit, c.need - held, c.add - held, c.ttl, c.base, -1, want, c.add]
        future = asyncio.get_running_loop().create_future()
        self._submit(_Op(spec, packed_keys, future, None))
        try:
            result = await future
        except BaseException:
            book.unfold(keys, folded)
            book.answered(asked, answer)
            raise
        n = len(checks)  # the script's numbers come back as integers
        refused = result[0] - 1
        if refused >= 0:  # the counters as found, without what this process holds of them
            book.unfold(keys, folded)
            book.answered(asked, answer)
            found = [v - (lease.left if lease is not None else 0)
                     for v, lease in zip(result[1:n + 1], folded, strict=True)]
            return Outcome(refused, tuple(found), tuple(result[n + 1:2 * n + 1]))
        values = result[1:n + 1]
        previous = result[n + 1:2 * n + 1]
        for i, taken in enumerate(result[2 * n + 1:]):
            if taken:
                values[i] -= taken
                book.add(keys[i], taken, values[i], previous[i], limits[i], checks[i].ttl)
        book.answered(asked, answer)
        if book.held and self._sweep is None:
            self._sweep = asyncio.get_running_loop().call_later(self._leases.seconds, self._end_leases)
        return Outcome(-1, tuple(values), tuple(previous))

    def _end_leases(self) -> None:
        """Give back what the leases past their time still hold."""
        self._sweep = None
        self._give_back(self._leases.ended())
        if self._leases.held:
            self._sweep = asyncio.get_running_loop().call_later(self._leases.seconds, self._end_leases)

    def _add_op(self, changes: Sequence[tuple[str, int, int]], future: asyncio.Future | None,
                then: Done | None) -> _Op:
        spec: list[str | int | float] = ["d"]
        keys: list[bytes] = []
        for key, delta, ttl in changes:
            keys.append(self._key(key))
            spec += [delta, ttl]
        return _Op(spec, keys, future, then)

    async def add(self, changes: Sequence[tuple[str, int, int]]) -> tuple[int, ...]:
        future = asyncio.get_running_loop().create_future()
        self._submit(self._add_op(changes, future, None))
        values = tuple(await future)
        return self._leases.without([key for key, _, _ in changes], values) if self._leases.held else values

    def add_later(self, changes: Sequence[tuple[str, int, int]], then: Done | None = None) -> None:
        if self._leases.held:
            settled = self._leases.settle(tuple([key for key, _, _ in changes]), [delta for _, delta, _ in changes])
            if settled is not None:
                if then is not None:
                    then(settled)
                return
        if then is not None:
            then = self._unleased([key for key, _, _ in changes], then)
        self._defer(self._add_op(changes, None, then))

    def _unleased(self, keys: list[str], then: Done) -> Done:
        """``then`` given the values without the units this process holds."""
        book = self._leases

        def done(values: tuple[int, ...] | None) -> None:
            then(book.without(keys, values) if values is not None and book.held else values)

        return done

    async def flush(self) -> None:
        self._give_back(self._leases.ended(everything=True))
        if self._timer is not None:
            self._timer.cancel()
            self._kick()
        while self._flusher is not None:
            await asyncio.shield(self._flusher)

    async def once(self, key: str, ttl: int) -> bool:
        return bool(await self.redis.set(self.prefix + key, 1, nx=True, ex=max(ttl, 1)))

    async def take_slot(self, key: str, member: str, limit: int, until: float) -> tuple[bool, int]:
        ok, count = await self._slot(keys=[self.prefix + key], args=[member, limit, time.time(), until])
        return bool(ok), int(count)

    async def free_slot(self, key: str, member: str) -> None:
        await self.redis.zrem(self.prefix + key, member)
