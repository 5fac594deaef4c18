/**
 * A PostgreSQL cluster of the test's own: `initdb` in a temporary folder, `pg_ctl` on a free
 * loopback port with trust auth, stopped and removed after. Debian's postgresql 15 binaries
 * (`apt-get install -y postgresql`); as root, the commands run as the `postgres` user, since
 * `initdb` refuses root.
 *
 * @module
 */
import { freePort, run } from "../runtime/process.ts";

const BIN = "/usr/lib/postgresql/15/bin";

/** A running cluster. */
export interface Postgres {
  /** `postgresql://postgres@127.0.0.1:<port>/<database>`. */
  url(database: string): string;
  /** Stops the cluster and removes its folder. */
  stop(): Promise<void>;
}

/** Starts a new cluster. */
export async function startPostgres(): Promise<Postgres> {
  const dir = await Deno.makeTempDir({ prefix: "tb-postgres-" });
  const asPostgres = (command: string, args: string[]) =>
    Deno.uid() === 0
      ? run("runuser", ["-u", "postgres", "--", `${BIN}/${command}`, ...args])
      : run(`${BIN}/${command}`, args);
  try {
    if (Deno.uid() === 0) {
      const uid = Number((await run("id", ["-u", "postgres"])).trim());
      const gid = Number((await run("id", ["-g", "postgres"])).trim());
      await Deno.chown(dir, uid, gid);
    }
  } catch (error) {
    await Deno.remove(dir, { recursive: true });
    throw error;
  }
  const port = freePort();
  const data = `${dir}/data`;
  let started = false;
  const stop = async () => {
    if (started) await asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
    await Deno.remove(dir, { recursive: true });
  };
  try {
    await asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
    started = true;
    await asPostgres("pg_ctl", [
      "-D",
      data,
      "-l",
      `${dir}/log`,
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      "-w",
      "start",
    ]);
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  return { url: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`, stop };
}
