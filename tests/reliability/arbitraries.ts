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
  });
  return fc.tuple(first, fc.array(commandArb(options), { maxLength, size: "max" })).map((
    [s, rest],
  ) => [
    s,
    ...rest,
  ]);
}
