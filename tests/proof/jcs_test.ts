/**
 * canonicalJson against RFC 8785 (JCS): its key order example (3.2.3), its number examples
 * (Appendix B) and its string escaping (3.2.2.2); and the one documented difference, a lone
 * surrogate (outside I-JSON), which JCS refuses and canonicalJson escapes.
 */
import assert from "node:assert/strict";
import { canonicalJson } from "../../src/core/json.ts";

Deno.test("canonicalJson sorts keys by UTF-16 code units as RFC 8785 3.2.3 does", () => {
  const value = {
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\ud83d\ude00": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis",
  };
  // Object.keys would list "1" first (an array index): the text is what counts.
  const text = canonicalJson(value);
  const order = [...text.matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((m) => JSON.parse(`"${m[1]}"`));
  assert.deepEqual(order, ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"]);
});

Deno.test("canonicalJson writes numbers as RFC 8785 Appendix B does", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [-0, "0"],
    [5e-324, "5e-324"],
    [-5e-324, "-5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [9007199254740992, "9007199254740992"],
    [-9007199254740992, "-9007199254740992"],
    [295147905179352830000, "295147905179352830000"],
    [9.999999999999997e22, "9.999999999999997e+22"],
    [1e23, "1e+23"],
    [999999999999999700000, "999999999999999700000"],
    [1e21, "1e+21"],
    [9.999999999999997e-7, "9.999999999999997e-7"],
    [0.000001, "0.000001"],
    [333333333.3333332, "333333333.3333332"],
  ];
  for (const [n, text] of cases) assert.equal(canonicalJson(n), text, text);
});

Deno.test("canonicalJson escapes strings as RFC 8785 3.2.2.2 does, and a lone surrogate as \\udxxx", () => {
  assert.equal(
    canonicalJson('\u20ac$\u000f\nA\'B"\\\\"/\b\f\t\r\u2028\u001f'),
    '"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/\\b\\f\\t\\r\u2028\\u001f"',
  );
  // JCS refuses a lone surrogate (no I-JSON); canonicalJson writes it as JSON.stringify does.
  assert.equal(canonicalJson("\ud800x"), '"\\ud800x"');
  assert.equal(
    canonicalJson({ b: [1, { d: true, c: null }], a: "" }),
    '{"a":"","b":[1,{"c":null,"d":true}]}',
  );
});
