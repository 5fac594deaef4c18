// A front for the conformance suite, which sends no Authorization header: it forwards every
// request to TARGET (the MCP route of one run) as it came, Host and Origin included, with the
// bearer token of TOKEN added. Listens on loopback, on PORT; prints "proxy on <port>" then.
import http from "node:http";

const target = new URL(process.env.TARGET);
const token = process.env.TOKEN;
const server = http.createServer((req, res) => {
  const upstream = http.request({
    hostname: target.hostname,
    port: target.port,
    path: target.pathname,
    method: req.method,
    headers: { ...req.headers, authorization: `Bearer ${token}` },
  }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on("error", () => {
    res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
server.listen(
  Number(process.env.PORT ?? 0),
  "127.0.0.1",
  () => console.log(`proxy on ${server.address().port}`),
);
process.on("SIGTERM", () => server.close(() => process.exit(0)));
