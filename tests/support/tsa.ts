/**
 * A real RFC 3161 Time Stamping Authority for tests: `openssl ts -reply` behind a small HTTP
 * server on a free loopback port, with a throwaway CA and a TSA certificate made by openssl for
 * it (EC P-256, `extendedKeyUsage = critical, timeStamping`). Each TSA has a CA of its own.
 *
 * @module
 */

/** A running TSA. */
export interface TestTsa {
  /** Where to POST a TimeStampReq (`application/timestamp-query`). */
  readonly url: string;
  /** The PEM of the CA that issued the TSA's certificate. */
  readonly caPem: string;
  /** The PEM of the TSA's own certificate. */
  readonly tsaPem: string;
  /** The folder of its keys and certificates (removed by `stop`). */
  readonly dir: string;
  /** Requests received so far, answered or refused. */
  readonly requests: number;
  /** While true, every request is answered 503 (and counted). */
  down: boolean;
  /** Stops the server and removes its files. */
  stop(): Promise<void>;
}

const MISSING =
  "openssl was not found on PATH. The timestamp tests run a real TSA with `openssl ts`: " +
  "install it with `apt-get install openssl` (Debian/Ubuntu) and run the tests again.";

/** Runs openssl in `dir`; throws with its error output when it fails. */
export async function openssl(dir: string, args: string[]): Promise<Uint8Array> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("openssl", { args, cwd: dir, stdout: "piped", stderr: "piped" })
      .output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw new Error(MISSING);
    throw error;
  }
  if (!out.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return out.stdout;
}

/** A CA (`ca.key`, `ca.crt`) and a TSA certificate it issued (`tsa.key`, `tsa.crt`) in `dir`. */
async function makeCertificates(dir: string, name: string): Promise<void> {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  await openssl(dir, [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    `/CN=${name} test CA`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  await openssl(dir, [
    "req",
    "-new",
    ...ec,
    "-keyout",
    "tsa.key",
    "-out",
    "tsa.csr",
    "-subj",
    `/CN=${name} test TSA`,
  ]);
  await Deno.writeTextFile(
    `${dir}/tsa.ext`,
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n" +
      "extendedKeyUsage=critical,timeStamping\n",
  );
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    "tsa.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "tsa.ext",
    "-out",
    "tsa.crt",
  ]);
  await Deno.writeTextFile(`${dir}/serial`, "01\n");
  await Deno.writeTextFile(
    `${dir}/tsa.cnf`,
    [
      "[ tsa ]",
      "default_tsa = tsa_config",
      "[ tsa_config ]",
      `serial = ${dir}/serial`,
      "crypto_device = builtin",
      `signer_cert = ${dir}/tsa.crt`,
      `certs = ${dir}/ca.crt`,
      `signer_key = ${dir}/tsa.key`,
      "signer_digest = sha256",
      "default_policy = 1.3.6.1.4.1.55555.1",
      "digests = sha256, sha384, sha512",
      "accuracy = secs:1",
      "ordering = no",
      "tsa_name = no",
      "ess_cert_id_chain = no",
      "ess_cert_id_alg = sha256",
      "",
    ].join("\n"),
  );
}

/**
 * Starts a TSA with a CA of its own. Fails with a clear message (never skips) when openssl is
 * not installed.
 *
 * @param name Names its CA and certificate (`CN=<name> test CA`).
 */
export async function startTsa(name = "tool-boundary"): Promise<TestTsa> {
  const dir = await Deno.makeTempDir({ prefix: "tool-boundary-tsa-" });
  await makeCertificates(dir, name);
  const caPem = await Deno.readTextFile(`${dir}/ca.crt`);
  const tsaPem = await Deno.readTextFile(`${dir}/tsa.crt`);
  let requests = 0;
  // One openssl at a time: each reply writes the serial file.
  let queue: Promise<unknown> = Promise.resolve();
  let next = 0;
  const reply = async (query: Uint8Array): Promise<Uint8Array<ArrayBuffer>> => {
    const n = next++;
    await Deno.writeFile(`${dir}/q${n}.tsq`, query);
    try {
      await openssl(dir, [
        "ts",
        "-reply",
        "-config",
        `${dir}/tsa.cnf`,
        "-queryfile",
        `q${n}.tsq`,
        "-out",
        `r${n}.tsr`,
      ]);
      return await Deno.readFile(`${dir}/r${n}.tsr`);
    } finally {
      await Deno.remove(`${dir}/q${n}.tsq`).catch(() => {});
      await Deno.remove(`${dir}/r${n}.tsr`).catch(() => {});
    }
  };
  const tsa = {
    down: false,
    get requests() {
      return requests;
    },
  };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      requests++;
      if (tsa.down) return new Response("down", { status: 503 });
      if (request.method !== "POST") return new Response("POST only", { status: 405 });
      const query = new Uint8Array(await request.arrayBuffer());
      const answer = queue.then(() => reply(query));
      queue = answer.catch(() => {});
      try {
        const body = await answer;
        return new Response(body, { headers: { "content-type": "application/timestamp-reply" } });
      } catch (error) {
        return new Response(String(error), { status: 500 });
      }
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}/tsa`;
  return Object.assign(tsa, {
    url,
    caPem,
    tsaPem,
    dir,
    async stop() {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  });
}
