/**
 * `UpstashRestClient`: the four calls `UpstashStore` makes (`EVALSHA`, `EVAL`, one command, a
 * pipeline of scripts), straight over Upstash's REST API with `fetch`. A Worker that needs
 * nothing else of Redis carries this instead of the whole `@upstash/redis` client (a class with
 * every Redis command): a smaller bundle, so a faster cold start.
 *
 * What it keeps of the official client: the request form (`POST` of a JSON array, `/pipeline`
 * for a batch), the bearer token, read-your-writes (the `upstash-sync-token` of the last answer
 * goes with the next request), and retries of a request whose `fetch` threw, never of an answer.
 * What it leaves out, as the store needs none of it: base64 answers and the JSON parse of every
 * string in them (the store reads its scripts' replies itself), auto-pipelining (the store
 * batches its own calls), telemetry headers, and the echo of the whole command in an error's
 * message (an error carries Redis's text only, never a key, an argument or the token).
 *
 * @module
 */
import type { UpstashPipeline } from "./batch.ts";
import { upstashError } from "./errors.ts";
import type { UpstashRedisClient } from "./options.ts";

/** Options of {@linkcode UpstashRestClient}. */
export interface UpstashRestClientOptions {
  /** The database's REST URL (`UPSTASH_REDIS_REST_URL`), `https:` or `http:`. */
  url: string;
  /** Its REST token (`UPSTASH_REDIS_REST_TOKEN`). */
  token: string;
  /**
   * Retries of a request whose `fetch` threw (the connection failed or was closed under it);
   * an HTTP answer, an error included, is never sent again. Every script of the store is safe
   * to run twice. `false` sends each request once.
   * @default { retries: 1, backoff: () => 100 }
   */
  retry?: false | {
    /** Times a request is sent again after its `fetch` threw: 0 to 10. */
    retries: number;
    /**
     * Milliseconds to wait before the retry numbered `retryCount` (0 for the first).
     * @default () => 100
     */
    backoff?: (retryCount: number) => number;
  };
}

/** `retry` of {@linkcode UpstashRestClientOptions}, given. */
type Retry = Exclude<UpstashRestClientOptions["retry"], false | undefined>;

/** A command as sent: its name and arguments; the number of keys goes as a number. */
type Command = (string | number)[];

/** One answer of `/pipeline`. */
interface PipelineAnswer {
  result?: unknown;
  error?: string;
}

const MAX_RETRIES = 10;
const DEFAULT_RETRY: Required<Retry> = { retries: 1, backoff: () => 100 };

/**
 * A client of Upstash's REST API with just what `UpstashStore` uses; pass it as the store's
 * `redis`. An `@upstash/redis` `Redis` works as well: use this one where bundle size counts
 * (Workers) or where nothing else needs the full client.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UpstashRestClient, UpstashStore } from "@tool-boundary/core/upstash";
 *
 * const redis = new UpstashRestClient({ url: "https://example.upstash.io", token: "t" });
 * const store = new UpstashStore({ redis, prefix: "agents" });
 * assert.equal(store.prefix, "agents");
 * assert.throws(() => new UpstashRestClient({ url: "example.upstash.io", token: "t" }), TypeError);
 * ```
 */
export class UpstashRestClient implements UpstashRedisClient {
  readonly #url: string;
  readonly #authorization: string;
  readonly #retries: number;
  readonly #backoff: (retryCount: number) => number;
  /** The last `upstash-sync-token` answered, sent with the next request. */
  #syncToken = "";

  /**
   * Creates the client; it sends nothing until asked.
   *
   * @param options The URL, the token and the retries.
   * @throws {TypeError} When `url` is not an http(s) URL or `token` is empty.
   * @throws {RangeError} When `retry` is not `false` or `{ retries }` of 0 to 10 with an
   *   optional `backoff` function.
   */
  constructor(options: UpstashRestClientOptions) {
    const { url, token, retry = DEFAULT_RETRY } = options ?? {} as UpstashRestClientOptions;
    let parsed: URL | undefined;
    try {
      parsed = typeof url === "string" ? new URL(url) : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
      throw new TypeError("Cannot create UpstashRestClient: url must be an http(s) URL");
    }
    if (typeof token !== "string" || token.trim() === "") {
      throw new TypeError("Cannot create UpstashRestClient: token must be a non-empty string");
    }
    const { retries, backoff = DEFAULT_RETRY.backoff } = retry === false
      ? { retries: 0 }
      : (retry ?? {}) as Partial<Retry>;
    if (
      !Number.isSafeInteger(retries) || (retries as number) < 0 ||
      (retries as number) > MAX_RETRIES || typeof backoff !== "function"
    ) {
      throw new RangeError(
        "Invalid retry: expected false or { retries, backoff? } with retries 0 to 10",
      );
    }
    this.#url = url.replace(/\/+$/, "");
    this.#authorization = `Bearer ${token}`;
    this.#retries = retries as number;
    this.#backoff = backoff;
  }

  /**
   * `EVALSHA sha numkeys ...keys ...args`.
   *
   * @param sha1 The script's SHA-1.
   * @param keys Its keys.
   * @param args Its arguments.
   * @returns The script's reply.
   */
  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#command(scriptCommand("evalsha", sha1, keys, args));
  }

  /**
   * `EVAL script numkeys ...keys ...args`.
   *
   * @param script The script's source.
   * @param keys Its keys.
   * @param args Its arguments.
   * @returns The script's reply.
   */
  eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#command(scriptCommand("eval", script, keys, args));
  }

  /**
   * Any one command, e.g. `["WAIT", "1", "500"]`.
   *
   * @param args The command's name and arguments.
   * @returns Its reply.
   */
  exec(args: [string, ...string[]]): Promise<unknown> {
    return this.#command([...args]);
  }

  /**
   * A pipeline of scripts, sent in one `POST /pipeline` by its `exec`.
   *
   * @returns The pipeline.
   */
  pipeline(): UpstashPipeline {
    const commands: Command[] = [];
    return {
      evalsha: (sha1, keys, args) => {
        commands.push(scriptCommand("evalsha", sha1, keys, args));
      },
      eval: (script, keys, args) => {
        commands.push(scriptCommand("eval", script, keys, args));
      },
      exec: async () => {
        const answers = await this.#post("/pipeline", commands);
        if (!Array.isArray(answers)) throw upstashError("Unexpected pipeline reply");
        return answers as PipelineAnswer[];
      },
    };
  }

  async #command(command: Command): Promise<unknown> {
    const answer = await this.#post("", command);
    if (answer === null || typeof answer !== "object" || Array.isArray(answer)) {
      throw upstashError("Unexpected reply");
    }
    return (answer as PipelineAnswer).result ?? null;
  }

  /** Posts `body` as JSON: the parsed answer of a 2xx without an `error`, else throws. */
  async #post(path: string, body: unknown): Promise<unknown> {
    const text = JSON.stringify(body);
    let response: Response;
    for (let retry = 0;; retry++) {
      const headers: Record<string, string> = {
        authorization: this.#authorization,
        "content-type": "application/json",
      };
      if (this.#syncToken !== "") headers["upstash-sync-token"] = this.#syncToken;
      try {
        response = await fetch(this.#url + path, { method: "POST", headers, body: text });
        break;
      } catch (error) {
        if (retry >= this.#retries) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, this.#backoff(retry)));
    }
    const syncToken = response.headers.get("upstash-sync-token");
    if (syncToken) this.#syncToken = syncToken;
    let answer: unknown;
    try {
      answer = await response.json();
    } catch {
      // Never quote the body: a proxy's error page is not ours to log.
      throw upstashError(`HTTP ${response.status}: the answer is not JSON`);
    }
    const error = answer !== null && typeof answer === "object" && !Array.isArray(answer)
      ? (answer as PipelineAnswer).error
      : undefined;
    if (!response.ok || error !== undefined) {
      throw upstashError(typeof error === "string" ? error : `HTTP ${response.status}`);
    }
    return answer;
  }
}

/** `EVAL`/`EVALSHA` as sent: the number of keys goes as a number, as the official client sends it. */
function scriptCommand(
  name: "eval" | "evalsha",
  script: string,
  keys: string[],
  args: string[],
): Command {
  return [name, script, keys.length, ...keys, ...args];
}
