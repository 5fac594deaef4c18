/**
 * Runs the test fixture (redis-server and the Upstash-compatible REST endpoint) in its own
 * process, so that the endpoint does not share the benchmark's event loop, as a real Upstash
 * endpoint would not. Started by `_fixture.ts`; not meant to be run by hand.
 *
 * Protocol: prints one JSON line `{ url, token }`, then answers lines on stdin:
 * `reset` -> `ok`, `requests` -> the request count since the last reset,
 * `commands` -> a JSON array of the command names since the last reset, `delay <ms>` -> `ok`
 * (every answer delayed by that many ms, a simulated round trip; 0 turns it off). EOF stops it.
 *
 * @module
 */
import { startUpstashFixture } from "../tests/support/upstash_fixture.ts";

const fixture = await startUpstashFixture();
const { endpoint } = fixture;
console.log(JSON.stringify({ url: endpoint.url, token: endpoint.token }));

async function* lines(): AsyncGenerator<string> {
  let buffered = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      yield buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
    }
  }
}

for await (const line of lines()) {
  if (line === "reset") {
    endpoint.reset();
    console.log("ok");
  } else if (line === "requests") {
    console.log(String(endpoint.requests));
  } else if (line === "commands") {
    console.log(JSON.stringify(endpoint.commands().map((command) => command[0])));
  } else if (line.startsWith("delay ")) {
    endpoint.setDelay(Number(line.slice(6)));
    console.log("ok");
  } else {
    console.log(JSON.stringify({ error: `unknown command ${line}` }));
  }
}
await fixture.stop();
