/**
 * The store's request transport: one script call, `EVALSHA` (then `EVAL` when Redis lost the
 * script), alone in its own REST request or packed with others issued at the same time into
 * one request to the pipeline endpoint.
 *
 * @module
 */
import { utf8ByteLength } from "../core/utf8.ts";
import { isNoScript, upstashError } from "./errors.ts";

/**
 * What the transport needs of an `@upstash/redis` pipeline (`redis.pipeline()`): queue script
 * calls, then send them all in one `POST /pipeline` and get each call's own answer.
 */
export interface UpstashPipeline {
  /** Queues `EVALSHA sha numkeys ...keys ...args`. */
  evalsha(sha1: string, keys: string[], args: string[]): unknown;
  /** Queues `EVAL script numkeys ...keys ...args`. */
  eval(script: string, keys: string[], args: string[]): unknown;
  /**
   * Sends the queued calls in one request; with `keepErrors`, each answer is its own `{ result }`
   * or `{ error }` (the request itself fails only as a whole: an HTTP error or no response).
   */
  exec(options: { keepErrors: true }): Promise<readonly { result?: unknown; error?: string }[]>;
}

/** The client calls the transport makes. */
export interface ScriptClient {
  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown>;
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  pipeline?(): UpstashPipeline;
}

/** A script as sent: the source for `EVAL` and its SHA-1 for `EVALSHA`. */
export interface SentScript {
  readonly source: string;
  readonly sha: string;
}

/** One script call: EVALSHA, then EVAL only when Redis answers NOSCRIPT. */
export async function sendOne(
  redis: ScriptClient,
  sent: SentScript,
  keys: string[],
  args: string[],
): Promise<unknown> {
  try {
    return await redis.evalsha(sent.sha, keys, args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return await redis.eval(sent.source, keys, args);
  }
}

interface Queued {
  sent: SentScript;
  keys: string[];
  args: string[];
  /** The call's bytes in a pipeline body, once asked for. */
  bytes: number;
  resolve(reply: unknown): void;
  reject(error: unknown): void;
}

/**
 * Microtask rounds a batch stays open after its first call. The calls one step issues together
 * (N invokes started at once, or N tools that answered in the same turn) reach the store a few
 * rounds apart at most; a timer or a macrotask would cost far more than the round trip it saves
 * on a single call (a `setTimeout(0)` is about 1 ms in Deno), and none of them is a Web API that
 * fires right after the microtasks drain.
 */
const OPEN_ROUNDS = 16;

/**
 * Packs the script calls made within a few microtask rounds of each other into pipeline
 * requests of at most `maxBytes` of JSON body each, also when they go again as `EVAL`s with
 * their scripts' source after NOSCRIPT; a call over the cap on its own goes in a request of its
 * own, and a call that came alone goes as the single command it always was. Each call stays its
 * own atomic script and gets its own answer: one's refusal, script error or NOSCRIPT never
 * touches another's; only a failure of the whole request (an HTTP error, no response after the
 * client's retries) fails every call in it, as it would fail a call sent alone.
 */
export class ScriptBatcher {
  readonly #redis: ScriptClient & { pipeline(): UpstashPipeline };
  readonly #maxBytes: number;
  #queue: Queued[] = [];

  constructor(redis: ScriptClient & { pipeline(): UpstashPipeline }, maxBytes: number) {
    this.#redis = redis;
    this.#maxBytes = maxBytes;
  }

  /** Queues a call; resolves to its reply as the client decoded it. */
  send(sent: SentScript, keys: string[], args: string[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ sent, keys, args, bytes: -1, resolve, reject });
      if (this.#queue.length === 1) void this.#flushLater();
    });
  }

  async #flushLater(): Promise<void> {
    for (let i = 0; i < OPEN_ROUNDS; i++) await undefined;
    const queue = this.#queue;
    this.#queue = [];
    if (queue.length === 1) {
      return settle(
        queue[0]!,
        sendOne(this.#redis, queue[0]!.sent, queue[0]!.keys, queue[0]!.args),
      );
    }
    for (const group of this.#pack(queue, false)) void this.#sendGroup(group, false);
  }

  /**
   * Splits calls, in order, into groups of at most maxBytes of body each; `full` for `EVAL`s,
   * which carry the script's source where an `EVALSHA` carries its SHA-1.
   */
  #pack(calls: Queued[], full: boolean): Queued[][] {
    const extra = (call: Queued) => (full ? sourceExtraBytes(call.sent) : 0);
    return packBySize(
      calls,
      this.#maxBytes,
      (call) => exactBytes(call) + extra(call),
      (call) => boundBytes(call) + extra(call),
    );
  }

  /**
   * One pipeline request for a group, also for a group of one: sent through the client's plain
   * command, a call over the cap could be packed again by the client's own auto-pipelining
   * with the others sent in the same tick.
   */
  async #sendGroup(group: Queued[], full: boolean): Promise<void> {
    let answers: readonly { result?: unknown; error?: string }[];
    try {
      const pipeline = this.#redis.pipeline();
      for (const { sent, keys, args } of group) {
        if (full) pipeline.eval(sent.source, keys, args);
        else pipeline.evalsha(sent.sha, keys, args);
      }
      answers = await pipeline.exec({ keepErrors: true });
      if (!Array.isArray(answers) || answers.length !== group.length) {
        throw new Error("Unexpected pipeline reply");
      }
    } catch (error) {
      // The request failed as a whole (after the client's own retries): as for a call alone.
      for (const call of group) call.reject(error);
      return;
    }
    const lost: Queued[] = [];
    for (let i = 0; i < group.length; i++) {
      const call = group[i]!;
      const answer = answers[i];
      const failure = answer?.error;
      if (failure === undefined || failure === null) {
        call.resolve(answer?.result);
        continue;
      }
      const error = upstashError(failure);
      if (!full && isNoScript(error)) lost.push(call);
      else call.reject(error);
    }
    // Redis lost the scripts (a restart, a flush): those calls again with the source, together.
    if (lost.length > 0) {
      for (const again of this.#pack(lost, true)) void this.#sendGroup(again, true);
    }
  }
}

/**
 * Splits items, in order, into groups whose sizes add up to at most `max`; an item over `max`
 * goes in a group of its own (the group being filled stays open). A group is sized by `bound`,
 * an upper bound of `exact` that is cheaper to compute, for as long as the bound fits; only a
 * group that may reach `max` has its items' `exact` sizes counted. So the groups are exactly the
 * ones `exact` alone gives.
 *
 * @param items The items, in order.
 * @param max The most a group may hold.
 * @param exact An item's size.
 * @param bound At least `exact` of the same item.
 * @returns The groups, in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { packBySize } from "./batch.ts";
 * const size = (n: number) => n;
 * // 9 is over the cap: a group of its own, sent while [4, 4] is still being filled.
 * assert.deepEqual(packBySize([4, 4, 9, 3], 8, size, (n) => n * 2), [[9], [4, 4], [3]]);
 * ```
 */
export function packBySize<T>(
  items: readonly T[],
  max: number,
  exact: (item: T) => number,
  bound: (item: T) => number,
): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let bytes = 0;
  let counted = false; // whether `bytes` is the group's exact size, or a bound of it
  for (const item of items) {
    if (!counted) {
      const most = bound(item);
      if (bytes + most <= max) {
        group.push(item);
        bytes += most;
        continue;
      }
      // The bound may not fit: the group so far, and each item from here, counted exactly.
      counted = true;
      bytes = 0;
      for (const member of group) bytes += exact(member);
    }
    const size = exact(item);
    if (size > max) {
      groups.push([item]); // alone, leaving the open group open
      continue;
    }
    if (group.length > 0 && bytes + size > max) {
      groups.push(group);
      group = [];
      bytes = 0;
      counted = false; // a new group, sized by bounds again while they fit
      const most = bound(item);
      if (most <= max) {
        group.push(item);
        bytes = most;
        continue;
      }
      counted = true;
    }
    group.push(item);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

async function settle(call: Queued, reply: Promise<unknown>): Promise<void> {
  try {
    call.resolve(await reply);
  } catch (error) {
    call.reject(error);
  }
}

/** {@linkcode evalExtraBytes} of each script, counted once: the sources never change. */
const sourceExtras = new WeakMap<SentScript, number>();

function sourceExtraBytes(sent: SentScript): number {
  let extra = sourceExtras.get(sent);
  if (extra === undefined) {
    extra = evalExtraBytes(sent);
    sourceExtras.set(sent, extra);
  }
  return extra;
}

/**
 * How many bytes more a call takes in a pipeline body as `["eval","<source>",n,...]` than as
 * {@linkcode entryBytes} counts it as `["evalsha","<sha>",n,...]`: the source as JSON (its
 * newlines and quotes escaped, UTF-8), less the quoted SHA-1 and the 3 letters of `sha`.
 *
 * @param sent The script.
 * @returns The bytes to add to {@linkcode entryBytes} (or {@linkcode entryBound}) for `EVAL`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { entryBytes, evalExtraBytes } from "./batch.ts";
 * const sent = { source: 'return "a"\n', sha: "f".repeat(40) };
 * const evalsha = JSON.stringify(["evalsha", sent.sha, 1, "k", "v"]);
 * const evalEntry = JSON.stringify(["eval", sent.source, 1, "k", "v"]);
 * assert.equal(evalEntry.length - evalsha.length, evalExtraBytes(sent));
 * assert.ok(entryBytes(sent.sha, ["k"], ["v"]) + evalExtraBytes(sent) >= evalEntry.length + 1);
 * ```
 */
export function evalExtraBytes(sent: SentScript): number {
  return utf8ByteLength(JSON.stringify(sent.source)) - (sent.sha.length + 2) - 3;
}

/** A call's {@linkcode entryBytes}, counted once. */
function exactBytes(call: Queued): number {
  if (call.bytes < 0) call.bytes = entryBytes(call.sent.sha, call.keys, call.args);
  return call.bytes;
}

function boundBytes(call: Queued): number {
  return entryBound(call.sent.sha, call.keys, call.args);
}

/**
 * A call's bytes in a pipeline body as the client sends it: `["evalsha","<sha>",n,...]` and a
 * comma. Exact for the keys and arguments (JSON escapes included).
 *
 * @param sha The script's SHA-1.
 * @param keys Its keys.
 * @param args Its arguments.
 * @returns The bytes.
 */
export function entryBytes(sha: string, keys: readonly string[], args: readonly string[]): number {
  return utf8ByteLength(JSON.stringify(keys)) + utf8ByteLength(JSON.stringify(args)) +
    sha.length + 24;
}

/**
 * At least {@linkcode entryBytes}, without making JSON: a string is at most 6 bytes of JSON per
 * UTF-16 unit (`\u0000` for a control character or a lone surrogate; 3 bytes of UTF-8 for the
 * rest), plus its quotes and a comma.
 *
 * @param sha The script's SHA-1.
 * @param keys Its keys.
 * @param args Its arguments.
 * @returns The bound.
 */
export function entryBound(sha: string, keys: readonly string[], args: readonly string[]): number {
  let units = 0;
  for (const key of keys) units += key.length;
  for (const arg of args) units += arg.length;
  return 6 * units + 3 * (keys.length + args.length) + 4 + sha.length + 24;
}
