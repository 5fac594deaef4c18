/**
 * A run's seal as the store keeps it (`sealJson`): what `endRun` writes once and every later
 * `endRun` and `exportRun` reads back.
 *
 * @module
 */
import { BoundaryError } from "../errors.ts";
import type { ObservedFact, RunReceipt } from "../types.ts";

/** What a run's seal keeps: the receipt and the report it was signed over. */
export interface Seal {
  receipt: RunReceipt;
  facts: ObservedFact[];
  omitted: number;
}

/** A stored seal, read back; a store that answers anything else is unavailable. */
export function parseSeal(sealJson: string): Seal {
  try {
    const seal = JSON.parse(sealJson) as Seal;
    if (
      typeof seal?.receipt?.sig === "string" && Array.isArray(seal.facts) &&
      typeof seal.omitted === "number"
    ) {
      return seal;
    }
  } catch {
    // Reported below.
  }
  throw new BoundaryError("STORE_UNAVAILABLE", {
    cause: new TypeError("The store holds a seal that is not one"),
  });
}
