import { MemoryStore } from "../../src/memory/mod.ts";
import { storeConformance } from "../../src/testing/mod.ts";

await storeConformance({
  name: "MemoryStore",
  createStore: () => {
    let now = Date.UTC(2026, 0, 1);
    const clock = () => now;
    return {
      store: new MemoryStore({ clock }),
      clock,
      advance: (ms: number) => {
        now += ms;
      },
    };
  },
});
