/**
 * The cost of a call of an upstream tool, as `mcpTools` takes it and `MCP_UPSTREAMS` says it: a
 * whole number of the harness's units, as the core's tool `cost` is. Not an entry of the package.
 *
 * @module
 */
import { MAX_COST } from "@tool-boundary/core/harness";
import { checkCost } from "@tool-boundary/core/store";

/** What a cost must be, for the messages that refuse one. */
export const COST_RULE = `a whole number of cost units from 0 to ${MAX_COST}`;

/**
 * Whether a value is a cost the core takes (its `checkCost`, the one rule): an integer from 0 to
 * `MAX_COST`, and not `-0`.
 *
 * @param value Anything.
 * @returns Whether it is a cost.
 */
export function isCost(value: unknown): value is number {
  try {
    checkCost("cost", value);
    return true;
  } catch {
    return false;
  }
}
