/**
 * Runs the Upstash-compatible REST endpoint against a local redis-server, for development:
 * point `@upstash/redis` (and so `UpstashStore`) at it with the printed environment variables.
 *
 * ```sh
 * # against a redis-server already listening on 127.0.0.1:6379
 * npx -y deno@2 run --allow-net --allow-run --allow-read --allow-write --allow-env tests/support/upstash_local.ts
 * # or start a throwaway redis-server (from PATH) for the session
 * npx -y deno@2 run -A tests/support/upstash_local.ts --spawn
 * # options: --port 8079 --token dev-token --redis-port 6379
 * ```
 *
 * Stop it with Ctrl-C.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type RedisServer, startRedisServer } from "./redis_server.ts";
import { RespConnection } from "./resp.ts";
import { startUpstashEndpoint } from "./upstash_endpoint.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    port: { type: "string", default: "8079" },
    token: { type: "string", default: "dev-token" },
    "redis-port": { type: "string", default: "6379" },
    spawn: { type: "boolean", default: false },
  },
});

let server: RedisServer | undefined;
if (values.spawn) server = await startRedisServer();
const redisPort = server?.port ?? Number(values["redis-port"]);
const probe = await RespConnection.connect(redisPort).catch((error) => {
  console.error(
    `No redis-server on 127.0.0.1:${redisPort}: start one (redis-server --save '' --appendonly no)` +
      " or pass --spawn.",
  );
  throw error;
});
await probe.close();

const endpoint = startUpstashEndpoint({
  connectRedis: () => RespConnection.connect(redisPort),
  token: values.token,
  port: Number(values.port),
});
console.log(`Upstash-compatible endpoint in front of redis-server on 127.0.0.1:${redisPort}`);
console.log(`export UPSTASH_REDIS_REST_URL=${endpoint.url}`);
console.log(`export UPSTASH_REDIS_REST_TOKEN=${endpoint.token}`);

const shutdown = async () => {
  await endpoint.stop();
  await server?.stop();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", shutdown);
Deno.addSignalListener("SIGTERM", shutdown);
