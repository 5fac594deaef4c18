/**
 * fast-check generators of model programs.
 *
 * @module
 */
import fc from "fast-check";
import type { Command, EnvelopeKind, InputKind } from "./model.ts";
import { MODEL_TOOLS } from "./tools.ts";

const TOOL_NAMES = Object.keys(MODEL_TOOLS);

/** Options of {@linkcode commandArb}. */
export interface CommandOptions {
  /** Include clock advances and the clock-moving tool (fake clocks only). */
  time: boolean;
}

/**
 * One command.
 *
 * @param options What the system under test supports.
 * @returns The generator.
 */
export function commandArb(options: CommandOptions): fc.Arbitrary<Command> {
  const input = fc.oneof(
    { weight: 8, arbitrary: fc.constant<InputKind>("obj") },
    { weight: 3, arbitrary: fc.constant<InputKind>("text") },
    {
      weight: 3,
      arbitrary: fc.constantFrom<InputKind>(
        "badText",
        "array",
        "big",
        "deep",
        "schemaBad",
        "proto",
      ),
    },
  );
  const env = fc.oneof(
    { weight: 10, arbitrary: fc.constant<EnvelopeKind>("ok") },
    { weight: 2, arbitrary: fc.constantFrom<EnvelopeKind>("badId", "mismatch", "unknownTool") },
  );
  const tools = options.time ? TOOL_NAMES : TOOL_NAMES.filter((name) => name !== "t_clock");
  const start = fc.record({
    t: fc.constant("start" as const),
    run: fc.nat(2),
    ttlMs: options.time ? fc.constantFrom(500, 2_000, 60_000, 600_000) : fc.constant(600_000),
    calls: fc.integer({ min: 1, max: 12 }),
    perTool: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
    cost: fc.option(fc.integer({ min: 0, max: 10 }), { nil: null }),
  });
  const invoke = fc.record({
    t: fc.constant("invoke" as const),
    ctx: fc.nat(5),
    call: fc.nat(7),
    tool: fc.constantFrom(...tools),
    input,
    env,
    bad: fc.nat(10),
    ms: fc.constantFrom(0, 500, 1_500),
  });
  const burst = fc.record({
    t: fc.constant("burst" as const),
    ctx: fc.nat(5),
    calls: fc.array(fc.nat(7), { minLength: 2, maxLength: 8 }),
    tool: fc.constantFrom("t_found" as const, "t_none" as const),
  });
  const inspect = fc.record({
    t: fc.constant("inspect" as const),
    run: fc.nat(2),
    call: fc.nat(7),
  });
  const end = fc.record({ t: fc.constant("end" as const), run: fc.nat(2), viaCtx: fc.boolean() });
  const advance = fc.record({
    t: fc.constant("advance" as const),
    ms: fc.constantFrom(1, 300, 999, 1_000, 1_001, 2_500, 70_000),
  });
  const arbs: fc.WeightedArbitrary<Command>[] = [
    { weight: 3, arbitrary: start },
    { weight: 10, arbitrary: invoke },
    { weight: 2, arbitrary: burst },
    { weight: 3, arbitrary: inspect },
    { weight: 2, arbitrary: end },
  ];
  if (options.time) arbs.push({ weight: 1, arbitrary: advance });
  return fc.oneof(...arbs);
}

/**
 * A program: starts with a run, then up to `maxLength` commands.
 *
 * @param options What the system under test supports.
 * @param maxLength The longest program.
 * @returns The generator.
 */
export function programArb(options: CommandOptions, maxLength: number): fc.Arbitrary<Command[]> {
  const first: fc.Arbitrary<Command> = fc.record({
    t: fc.constant("start" as const),
    run: fc.nat(2),
    ttlMs: options.time ? fc.constantFrom(2_000, 60_000) : fc.constant(600_000),
    calls: fc.integer({ min: 1, max: 12 }),
    perTool: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
    cost: fc.option(fc.integer({ min: 0, max: 10 }), { nil: null }),
  });
  return fc.tuple(first, fc.array(commandArb(options), { maxLength, size: "max" })).map((
    [s, rest],
  ) => [
    s,
    ...rest,
  ]);
}

/**
 * How one array or object in a generated value is made hostile. The first two, read once,
 * give exactly the plain data (every later read gives a canary instead): a snapshot must
 * accept them and record that data. Every other kind must be refused.
 */
export type Hostility =
  | "getters" // every property or element an enumerable getter
  | "proxy" // an honest Proxy
  | "throwingGetter"
  | "throwOwnKeys"
  | "throwDescriptor"
  | "throwGet"
  | "throwPrototype"
  | "throwHas"
  | "ghostKey" // ownKeys lists a key that has no descriptor
  | "hiddenToJSON" // a non-enumerable own toJSON
  | "inheritedToJSON" // a Proxy that says its prototype is the plain one, over one with toJSON
  | "symbolKey"
  | "hiddenProperty" // a non-enumerable own property
  | "arrayExtra"
  | "arraySubclass"
  | "arrayHole";

/** The hostilities a snapshot must accept: they change nothing the first read sees. */
export const BENIGN_HOSTILITIES: ReadonlySet<Hostility> = new Set(["getters", "proxy"]);

const HOSTILITIES: readonly Hostility[] = [
  "getters",
  "proxy",
  "throwingGetter",
  "throwOwnKeys",
  "throwDescriptor",
  "throwGet",
  "throwPrototype",
  "throwHas",
  "ghostKey",
  "hiddenToJSON",
  "inheritedToJSON",
  "symbolKey",
  "hiddenProperty",
  "arrayExtra",
  "arraySubclass",
  "arrayHole",
];

/** Where to make a generated value hostile: the `at`-th array or object (pre-order, modulo). */
export interface HostilePlan {
  at: number;
  how: Hostility;
}

/**
 * Plain JSON data and a plan of hostilities at random places in it.
 *
 * @param data The plain data generator (arrays and objects in it are where hostility goes).
 * @returns The generator; about half the hostilities drawn are benign, so both outcomes stay
 *   common.
 */
export function hostileJsonArb<T>(
  data: fc.Arbitrary<T>,
): fc.Arbitrary<{ data: T; plan: HostilePlan[] }> {
  const how = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom<Hostility>("getters", "proxy") },
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILITIES) },
  );
  return fc.record({
    data,
    plan: fc.array(fc.record({ at: fc.nat(20), how }), { maxLength: 3 }),
  });
}

/** A hostile value built from plain data, and what reading it must give. */
export interface HostileValue {
  /** The hostile value. */
  value: unknown;
  /** The hostilities applied (a plan's entry is skipped where it cannot apply). */
  applied: Hostility[];
  /** Whether a snapshot must refuse it. */
  refused: boolean;
  /** The top-level array or object's own hostility, if any. */
  top: Hostility | null;
  /** The plain containers behind the value, to mutate after it was read. */
  targets: object[];
}

/**
 * Builds the hostile value of a plan: fresh containers (the data itself is never changed), a
 * canary in every thrown message, hidden value and later read.
 *
 * @param data Plain JSON data.
 * @param plan Where and how.
 * @param canary The text planted in what must never reach an agent.
 * @returns The value and what a snapshot must make of it.
 */
export function makeHostile(
  data: unknown,
  plan: readonly HostilePlan[],
  canary: string,
): HostileValue {
  let containers = 0;
  const count = (value: unknown): void => {
    if (typeof value !== "object" || value === null) return;
    containers++;
    for (const child of Object.values(value)) count(child);
  };
  count(data);
  const chosen = new Map<number, Hostility>();
  for (const { at, how } of plan) {
    if (containers > 0 && !chosen.has(at % containers)) chosen.set(at % containers, how);
  }
  const applied: Hostility[] = [];
  const targets: object[] = [];
  let top: Hostility | null = null;
  let index = 0;
  const later = `${canary} (a later read)`;
  const thrower = (what: string) => () => {
    throw new Error(`${canary} thrown by ${what}`);
  };
  const build = (value: unknown): unknown => {
    if (typeof value !== "object" || value === null) return value;
    const at = index++;
    const isArray = Array.isArray(value);
    const entries = Object.entries(value).map(([k, v]) => [k, build(v)] as const);
    const node: Record<string, unknown> | unknown[] = isArray ? [] : {};
    for (const [key, child] of entries) {
      Object.defineProperty(node, key, {
        value: child,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    targets.push(node);
    const how = chosen.get(at);
    const keys = entries.map(([key]) => key);
    if (how === undefined || !applies(how, isArray, keys)) return node;
    applied.push(how);
    if (at === 0) top = how;
    return harden(node, how, isArray, keys, thrower, later);
  };
  const value = build(data);
  const refused = applied.some((how) => !BENIGN_HOSTILITIES.has(how));
  return { value, applied, refused, top, targets };
}

/** Whether a hostility can apply here, so that a snapshot meets it (it reads what it must). */
function applies(how: Hostility, isArray: boolean, keys: readonly string[]): boolean {
  const size = keys.length;
  switch (how) {
    case "arrayExtra":
    case "arraySubclass":
    case "arrayHole":
      return isArray;
    case "throwDescriptor": // read per key of an object; an array's elements are only got
      return !isArray && size > 0;
    case "throwingGetter":
    case "throwGet":
      return size > 0 || (isArray && how === "throwGet"); // an array's length is got too
    case "throwHas": // asked only where no own toJSON answers first
      return isArray || !keys.includes("toJSON");
    default:
      return true;
  }
}

function harden(
  node: Record<string, unknown> | unknown[],
  how: Hostility,
  isArray: boolean,
  keys: readonly string[],
  thrower: (what: string) => () => never,
  later: string,
): unknown {
  const define = (key: PropertyKey, descriptor: PropertyDescriptor) =>
    Object.defineProperty(node, key, { configurable: true, ...descriptor });
  switch (how) {
    case "getters":
      for (const key of keys) {
        const first = (node as Record<string, unknown>)[key];
        let reads = 0;
        define(key, { enumerable: true, get: () => (reads++ === 0 ? first : later) });
      }
      return node;
    case "proxy": {
      const reads = new Set<PropertyKey>();
      return new Proxy(node, {
        get(target, key, receiver) {
          if (reads.has(key)) return later;
          reads.add(key);
          return Reflect.get(target, key, receiver);
        },
      });
    }
    case "throwingGetter":
      define(keys[0]!, { enumerable: true, get: thrower("a getter") });
      return node;
    case "throwOwnKeys":
      return new Proxy(node, { ownKeys: thrower("ownKeys") });
    case "throwDescriptor":
      return new Proxy(node, { getOwnPropertyDescriptor: thrower("getOwnPropertyDescriptor") });
    case "throwGet":
      return new Proxy(node, { get: thrower("get") });
    case "throwPrototype":
      return new Proxy(node, { getPrototypeOf: thrower("getPrototypeOf") });
    case "throwHas":
      return new Proxy(node, { has: thrower("has") });
    case "ghostKey":
      return new Proxy(node, { ownKeys: (target) => [...Reflect.ownKeys(target), "ghost"] });
    case "hiddenToJSON":
      define("toJSON", { enumerable: false, value: thrower("a hidden toJSON") });
      return node;
    case "inheritedToJSON": {
      const plain = isArray ? Array.prototype : Object.prototype;
      Object.setPrototypeOf(node, Object.create(plain, { toJSON: { value: thrower("toJSON") } }));
      return new Proxy(node, { getPrototypeOf: () => plain });
    }
    case "symbolKey":
      define(Symbol(later), { enumerable: true, value: later });
      return node;
    case "hiddenProperty":
      define("hidden", { enumerable: false, value: later });
      return node;
    case "arrayExtra":
      define("extra", { enumerable: true, value: later });
      return node;
    case "arraySubclass":
      Object.setPrototypeOf(node, HostileArray.prototype);
      return node;
    case "arrayHole":
      (node as unknown[]).length += 1;
      return node;
  }
}

class HostileArray extends Array {}
