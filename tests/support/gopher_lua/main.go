// Command gopher-lua-redis speaks RESP on a loopback port in front of a real redis-server and
// runs every Lua script on gopher-lua (github.com/yuin/gopher-lua), the Go Lua VM that Upstash
// runs scripts on, instead of redis-server's own Lua 5.1. The tests put the Upstash REST
// endpoint in front of it, so the store's scripts run on both engines.
//
// What it does:
//   - EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT LOAD, SCRIPT EXISTS and SCRIPT FLUSH are its
//     own: a script runs on one gopher-lua state with KEYS, ARGV, redis.call, redis.pcall,
//     redis.error_reply, redis.status_reply, redis.sha1hex, redis.log and a cjson table
//     (lua-cjson's rules) implemented in Go. Each redis.call goes to redis-server on the
//     client's own connection. Replies convert as Redis converts them: integer -> number,
//     bulk -> string, nil -> false, array -> table, status -> {ok=...}, error -> {err=...};
//     and back: number -> integer (truncated), string -> bulk, a table as an array up to its
//     first nil, false/nil -> nil bulk, true -> 1, {ok=...} -> status, {err=...} -> error.
//   - A script's first line `#!lua flags=...` is read as redis-server 7.0 reads it: only the
//     Redis flags (no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys) pass;
//     any other flag, such as Upstash's allow-key-locking (which the test endpoint drops before
//     a script gets here), is refused with redis-server's error. The line is dropped and its
//     line feed kept, so line numbers stay. no-writes scripts and EVAL_RO/EVALSHA_RO refuse
//     write commands; commands flagged noscript are refused in every script.
//   - Scripts and plain commands all take one lock, so a script is atomic against every client
//     of this process, as in Redis (a client talking to redis-server directly is not held).
//   - MULTI ... EXEC is queued here and run under the lock, since a queued EVAL must run here.
//   - Everything else is passed on to redis-server unchanged, one reply per command.
//
// Usage: gopher-lua-redis -redis-port N [-port 0]. It prints "PORT <n>" once it listens, and
// exits when its standard input closes (so it never outlives the test process that started it).
//
// Build (Debian packages golang-go and golang-github-yuin-gopher-lua-dev, no module download):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o gopher-lua-redis main.go
package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// ---------------------------------------------------------------------------------------------
// RESP2 values

type kind int

const (
	kStatus kind = iota
	kError
	kInt
	kBulk
	kArray
	kNil // nil bulk string or nil array
)

type value struct {
	k kind
	s string
	i int64
	a []value
}

func status(s string) value { return value{k: kStatus, s: s} }
func errorf(format string, args ...interface{}) value {
	return value{k: kError, s: fmt.Sprintf(format, args...)}
}
func bulk(s string) value   { return value{k: kBulk, s: s} }
func integer(i int64) value { return value{k: kInt, i: i} }
func array(a []value) value { return value{k: kArray, a: a} }
func nilValue() value       { return value{k: kNil} }
func okValue() value        { return status("OK") }
func noscript() value       { return errorf("NOSCRIPT No matching script. Please use EVAL.") }
func arity(name string) value {
	return errorf("ERR wrong number of arguments for '%s' command", strings.ToLower(name))
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return "", errors.New("protocol error: line without CRLF")
	}
	return line[:len(line)-2], nil
}

func readValue(r *bufio.Reader) (value, error) {
	line, err := readLine(r)
	if err != nil {
		return value{}, err
	}
	if line == "" {
		return value{}, errors.New("protocol error: empty line")
	}
	rest := line[1:]
	switch line[0] {
	case '+':
		return status(rest), nil
	case '-':
		return value{k: kError, s: rest}, nil
	case ':':
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return value{}, err
		}
		return integer(n), nil
	case '$':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return value{}, err
		}
		if n < 0 {
			return nilValue(), nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return value{}, err
		}
		return bulk(string(buf[:n])), nil
	case '*':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return value{}, err
		}
		if n < 0 {
			return nilValue(), nil
		}
		items := make([]value, n)
		for i := range items {
			if items[i], err = readValue(r); err != nil {
				return value{}, err
			}
		}
		return array(items), nil
	}
	return value{}, fmt.Errorf("protocol error: unexpected reply type %q", line[0])
}

// readCommand reads one client command: a RESP array of bulk strings, or an inline command.
func readCommand(r *bufio.Reader) ([]string, error) {
	for {
		b, err := r.Peek(1)
		if err != nil {
			return nil, err
		}
		if b[0] != '*' {
			line, err := r.ReadString('\n')
			if err != nil {
				return nil, err
			}
			if args := strings.Fields(line); len(args) > 0 {
				return args, nil
			}
			continue
		}
		v, err := readValue(r)
		if err != nil {
			return nil, err
		}
		if v.k != kArray {
			continue
		}
		args := make([]string, 0, len(v.a))
		for _, item := range v.a {
			if item.k != kBulk {
				return nil, errors.New("protocol error: expected bulk strings")
			}
			args = append(args, item.s)
		}
		if len(args) > 0 {
			return args, nil
		}
	}
}

func writeValue(w *bufio.Writer, v value) {
	switch v.k {
	case kStatus:
		w.WriteString("+" + oneLine(v.s) + "\r\n")
	case kError:
		w.WriteString("-" + oneLine(v.s) + "\r\n")
	case kInt:
		w.WriteString(":" + strconv.FormatInt(v.i, 10) + "\r\n")
	case kBulk:
		w.WriteString("$" + strconv.Itoa(len(v.s)) + "\r\n" + v.s + "\r\n")
	case kNil:
		w.WriteString("$-1\r\n")
	case kArray:
		w.WriteString("*" + strconv.Itoa(len(v.a)) + "\r\n")
		for _, item := range v.a {
			writeValue(w, item)
		}
	}
}

// oneLine replaces CR and LF with spaces, as Redis does in status and error replies.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// ---------------------------------------------------------------------------------------------
// redis-server connections

type upstream struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

func dial(addr string) (*upstream, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &upstream{conn: conn, r: bufio.NewReaderSize(conn, 64*1024), w: bufio.NewWriterSize(conn, 64*1024)}, nil
}

func (u *upstream) do(args []string) (value, error) {
	u.w.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, arg := range args {
		u.w.WriteString("$" + strconv.Itoa(len(arg)) + "\r\n" + arg + "\r\n")
	}
	if err := u.w.Flush(); err != nil {
		return value{}, err
	}
	return readValue(u.r)
}

// ---------------------------------------------------------------------------------------------
// The script engine

type script struct {
	fn       *lua.LFunction
	noWrites bool
}

type commandInfo struct {
	write, noscript bool
	// Redis's arity: the exact count of arguments with the name, or at least -arity when negative.
	arity int
}

type engine struct {
	mu       sync.Mutex
	L        *lua.LState
	scripts  map[string]*script
	commands map[string]commandInfo // from COMMAND, read once
	// The running script's connection to redis-server and whether it may write.
	cur      *upstream
	readOnly bool
	lost     error // set when cur failed during a script
	null     *lua.LUserData
}

const (
	flagNoWrites = "no-writes"
)

// Redis 7.0's script flags (scripts_flags_def).
var knownFlags = map[string]bool{
	"no-writes": true, "allow-oom": true, "allow-stale": true, "no-cluster": true,
	"allow-cross-slot-keys": true,
}

func newEngine() *engine {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	e := &engine{L: L, scripts: map[string]*script{}, null: L.NewUserData()}
	// Redis leaves no way out of the sandbox: no loading of files or code by name.
	for _, name := range []string{"dofile", "loadfile", "require", "module", "print", "collectgarbage"} {
		L.SetGlobal(name, lua.LNil)
	}
	redis := L.NewTable()
	L.SetField(redis, "call", L.NewFunction(func(L *lua.LState) int { return e.redisCall(L, true) }))
	L.SetField(redis, "pcall", L.NewFunction(func(L *lua.LState) int { return e.redisCall(L, false) }))
	L.SetField(redis, "error_reply", L.NewFunction(func(L *lua.LState) int {
		msg := L.CheckString(1)
		t := L.NewTable()
		t.RawSetString("err", lua.LString(strings.TrimPrefix(msg, "-")))
		L.Push(t)
		return 1
	}))
	L.SetField(redis, "status_reply", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(L.CheckString(1)))
		L.Push(t)
		return 1
	}))
	L.SetField(redis, "sha1hex", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(sha1hex(L.CheckString(1))))
		return 1
	}))
	L.SetField(redis, "log", L.NewFunction(func(L *lua.LState) int { return 0 }))
	for i, name := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"} {
		L.SetField(redis, name, lua.LNumber(i))
	}
	L.SetGlobal("redis", redis)
	cjson := L.NewTable()
	L.SetField(cjson, "encode", L.NewFunction(e.cjsonEncode))
	L.SetField(cjson, "decode", L.NewFunction(e.cjsonDecode))
	L.SetField(cjson, "null", e.null)
	L.SetGlobal("cjson", cjson)
	L.SetGlobal("KEYS", L.NewTable())
	L.SetGlobal("ARGV", L.NewTable())
	// Redis 7.0 protects the globals: reading one that does not exist and writing any fail.
	protect := L.NewTable()
	L.SetField(protect, "__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	}))
	L.SetField(protect, "__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	}))
	L.SetMetatable(L.G.Global, protect)
	return e
}

func sha1hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// compile reads the shebang line as redis-server 7.0 does (evalExtractShebangFlags) and
// compiles the body, the shebang line dropped and its line feed kept.
func (e *engine) compile(body string) (*script, value) {
	s := &script{}
	code := body
	if strings.HasPrefix(body, "#!") {
		end := strings.IndexByte(body, '\n')
		if end < 0 {
			return nil, errorf("ERR Invalid script shebang")
		}
		parts := strings.Fields(body[:end])
		if len(parts) == 0 || parts[0] != "#!lua" {
			engineName := ""
			if len(parts) > 0 {
				engineName = parts[0]
			}
			return nil, errorf("ERR Unexpected engine in script shebang: %s", engineName)
		}
		for _, part := range parts[1:] {
			if !strings.HasPrefix(part, "flags=") {
				return nil, errorf("ERR Unknown lua shebang option: %s", part)
			}
			for _, f := range strings.Split(part[len("flags="):], ",") {
				if !knownFlags[f] {
					return nil, errorf("ERR Unexpected flag in script shebang: %s", f)
				}
				if f == flagNoWrites {
					s.noWrites = true
				}
			}
		}
		code = body[end:]
	}
	fn, err := e.L.Load(strings.NewReader(code), "user_script")
	if err != nil {
		return nil, errorf("ERR Error compiling script (new function): %s", oneLine(err.Error()))
	}
	s.fn = fn
	return s, value{}
}

func (e *engine) load(body string) (string, *script, value) {
	sha := sha1hex(body)
	if s, ok := e.scripts[sha]; ok {
		return sha, s, value{}
	}
	s, failure := e.compile(body)
	if s == nil {
		return sha, nil, failure
	}
	e.scripts[sha] = s
	return sha, s, value{}
}

// loadCommands reads every command's flags once (COMMAND), for the script checks.
func (e *engine) loadCommands(u *upstream) error {
	if e.commands != nil {
		return nil
	}
	reply, err := u.do([]string{"COMMAND"})
	if err != nil {
		return err
	}
	if reply.k != kArray {
		return fmt.Errorf("COMMAND answered %v", reply.s)
	}
	commands := map[string]commandInfo{}
	for _, entry := range reply.a {
		if entry.k != kArray || len(entry.a) < 3 {
			continue
		}
		info := commandInfo{arity: int(entry.a[1].i)}
		for _, flag := range entry.a[2].a {
			switch flag.s {
			case "write":
				info.write = true
			case "noscript":
				info.noscript = true
			}
		}
		commands[strings.ToLower(entry.a[0].s)] = info
	}
	e.commands = commands
	return nil
}

// run runs a script (the lock held) with its keys and arguments.
func (e *engine) run(sha string, s *script, u *upstream, keys, args []string, readOnly bool) (value, error) {
	if err := e.loadCommands(u); err != nil {
		return value{}, err
	}
	L := e.L
	L.G.Global.RawSetString("KEYS", stringTable(L, keys))
	L.G.Global.RawSetString("ARGV", stringTable(L, args))
	e.cur, e.readOnly, e.lost = u, readOnly || s.noWrites, nil
	defer func() { e.cur = nil }()
	L.SetTop(0)
	L.Push(s.fn)
	err := L.PCall(0, 1, nil)
	if e.lost != nil {
		L.SetTop(0)
		return value{}, e.lost
	}
	if err != nil {
		L.SetTop(0)
		return scriptError(err, sha), nil
	}
	result := L.Get(-1)
	L.SetTop(0)
	return toResp(result, 0), nil
}

func stringTable(L *lua.LState, items []string) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for _, item := range items {
		t.Append(lua.LString(item))
	}
	return t
}

// scriptError is the reply for a script that raised an error: an error table's text as it is
// (a redis.call's error keeps its code), anything else as "ERR <message>".
func scriptError(err error, sha string) value {
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) {
		if t, ok := apiErr.Object.(*lua.LTable); ok {
			if msg, ok := t.RawGetString("err").(lua.LString); ok {
				return value{k: kError, s: string(msg) + " script: " + sha}
			}
		}
		if msg, ok := apiErr.Object.(lua.LString); ok {
			return errorf("ERR %s script: %s", string(msg), sha)
		}
	}
	return errorf("ERR %s script: %s", err.Error(), sha)
}

// redisCall is redis.call (raise) and redis.pcall.
func (e *engine) redisCall(L *lua.LState, raise bool) int {
	fail := func(msg string) int {
		t := L.NewTable()
		t.RawSetString("err", lua.LString(msg))
		if raise {
			L.Error(t, 1)
			return 0
		}
		L.Push(t)
		return 1
	}
	n := L.GetTop()
	if n == 0 {
		return fail("ERR Please specify at least one argument for this redis lib call")
	}
	args := make([]string, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			args[i-1] = string(v)
		case lua.LNumber:
			args[i-1] = numberArg(float64(v))
		default:
			return fail("ERR Lua redis lib command arguments must be strings or integers")
		}
	}
	if e.cur == nil {
		return fail("ERR redis.call outside of a script")
	}
	info, known := e.commands[strings.ToLower(args[0])]
	if !known {
		return fail("ERR Unknown Redis command called from script")
	}
	if info.noscript {
		return fail("ERR This Redis command is not allowed from script")
	}
	if info.write && e.readOnly {
		return fail("ERR Write commands are not allowed from read-only scripts.")
	}
	reply, err := e.cur.do(args)
	if err != nil {
		e.lost = err
		return fail("ERR redis-server connection lost")
	}
	if reply.k == kError {
		return fail(reply.s)
	}
	L.Push(toLua(L, reply))
	return 1
}

// numberArg is a Lua number as a command argument: "%.17g", as redis-server 7.0 formats it
// (not Lua's "%.14g", which loses digits).
func numberArg(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e17 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// toLua converts a redis-server reply as Redis does for a script.
func toLua(L *lua.LState, v value) lua.LValue {
	switch v.k {
	case kInt:
		return lua.LNumber(v.i)
	case kBulk:
		return lua.LString(v.s)
	case kNil:
		return lua.LFalse
	case kStatus:
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(v.s))
		return t
	case kError:
		t := L.NewTable()
		t.RawSetString("err", lua.LString(v.s))
		return t
	case kArray:
		t := L.CreateTable(len(v.a), 0)
		for _, item := range v.a {
			t.Append(toLua(L, item))
		}
		return t
	}
	return lua.LFalse
}

// toResp converts a script's return value as Redis does (luaReplyToRedisReply, RESP2).
func toResp(v lua.LValue, depth int) value {
	switch x := v.(type) {
	case lua.LString:
		return bulk(string(x))
	case lua.LNumber:
		return integer(int64(float64(x)))
	case lua.LBool:
		if x {
			return integer(1)
		}
		return nilValue()
	case *lua.LTable:
		if msg, ok := x.RawGetString("err").(lua.LString); ok {
			return value{k: kError, s: string(msg)}
		}
		if msg, ok := x.RawGetString("ok").(lua.LString); ok {
			return status(string(msg))
		}
		if depth > 1000 {
			return errorf("ERR reached lua stack limit")
		}
		items := []value{}
		for i := 1; ; i++ {
			item := x.RawGetInt(i)
			if item == lua.LNil {
				break
			}
			items = append(items, toResp(item, depth+1))
		}
		return array(items)
	}
	return nilValue()
}

// ---------------------------------------------------------------------------------------------
// cjson, with lua-cjson's rules (as Redis bundles it)

func (e *engine) cjsonEncode(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	var b strings.Builder
	if msg := e.encode(&b, L.Get(1), 0); msg != "" {
		L.RaiseError("Cannot serialise %s", msg)
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// formatNumber is lua-cjson's "%.14g".
func formatNumber(f float64) string {
	return strconv.FormatFloat(f, 'g', 14, 64)
}

var escapes = func() [256]string {
	var t [256]string
	for c := 0; c < 0x20; c++ {
		t[c] = fmt.Sprintf("\\u%04x", c)
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = "\\b", "\\t", "\\n", "\\f", "\\r"
	t['"'], t['\\'], t['/'], t[0x7f] = "\\\"", "\\\\", "\\/", "\\u007f"
	return t
}()

func encodeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if esc := escapes[s[i]]; esc != "" {
			b.WriteString(esc)
		} else {
			b.WriteByte(s[i])
		}
	}
	b.WriteByte('"')
}

// encode appends v's JSON; it returns what cannot be serialised, or "".
func (e *engine) encode(b *strings.Builder, v lua.LValue, depth int) string {
	switch x := v.(type) {
	case *lua.LNilType:
		b.WriteString("null")
	case lua.LBool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case lua.LNumber:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "number: must not be NaN or Inf"
		}
		b.WriteString(formatNumber(f))
	case lua.LString:
		encodeString(b, string(x))
	case *lua.LUserData:
		if x != e.null {
			return "userdata: type not supported"
		}
		b.WriteString("null")
	case *lua.LTable:
		if depth >= 1000 {
			return "table: excessive nesting"
		}
		length, isArray := arrayLength(x)
		if isArray && length > 0 {
			b.WriteByte('[')
			for i := 1; i <= length; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				if msg := e.encode(b, x.RawGetInt(i), depth+1); msg != "" {
					return msg
				}
			}
			b.WriteByte(']')
			return ""
		}
		if length < 0 {
			return "table: excessively sparse array"
		}
		b.WriteByte('{')
		first := true
		var failure string
		for key, item := x.Next(lua.LNil); key != lua.LNil; key, item = x.Next(key) {
			if failure != "" {
				break
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			switch k := key.(type) {
			case lua.LString:
				encodeString(b, string(k))
			case lua.LNumber:
				encodeString(b, formatNumber(float64(k)))
			default:
				failure = "table: table key must be a number or string"
				continue
			}
			b.WriteByte(':')
			failure = e.encode(b, item, depth+1)
		}
		b.WriteByte('}')
		return failure
	default:
		return fmt.Sprintf("%s: type not supported", v.Type().String())
	}
	return ""
}

// arrayLength is lua-cjson's lua_array_length: the largest key when every key is an integer
// >= 1 (isArray), -1 with isArray false for an excessively sparse one, 0 and false otherwise.
func arrayLength(t *lua.LTable) (int, bool) {
	max, items := 0, 0
	for key, _ := t.Next(lua.LNil); key != lua.LNil; key, _ = t.Next(key) {
		n, ok := key.(lua.LNumber)
		if !ok || float64(n) != math.Floor(float64(n)) || n < 1 {
			return 0, false
		}
		if int(n) > max {
			max = int(n)
		}
		items++
	}
	// encode_sparse_ratio 2, encode_sparse_safe 10, encode_sparse_convert off.
	if max > items*2 && max > 10 {
		return -1, false
	}
	return max, true
}

type decoder struct {
	s     string
	at    int
	L     *lua.LState
	null  lua.LValue
	depth int
}

func (e *engine) cjsonDecode(L *lua.LState) int {
	d := &decoder{s: L.CheckString(1), L: L, null: e.null}
	v, msg := d.value()
	if msg == "" {
		d.space()
		if d.at < len(d.s) {
			msg = fmt.Sprintf("Expected the end but found invalid token at character %d", d.at+1)
		}
	}
	if msg != "" {
		L.RaiseError("%s", msg)
	}
	L.Push(v)
	return 1
}

func (d *decoder) space() {
	for d.at < len(d.s) && strings.IndexByte(" \t\n\r", d.s[d.at]) >= 0 {
		d.at++
	}
}

func (d *decoder) fail(what string) (lua.LValue, string) {
	return lua.LNil, fmt.Sprintf("Expected %s but found invalid token at character %d", what, d.at+1)
}

func (d *decoder) value() (lua.LValue, string) {
	d.space()
	if d.at >= len(d.s) {
		return d.fail("value")
	}
	switch c := d.s[d.at]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		s, msg := d.str()
		if msg != "" {
			return lua.LNil, msg
		}
		return lua.LString(s), ""
	case strings.HasPrefix(d.s[d.at:], "true"):
		d.at += 4
		return lua.LTrue, ""
	case strings.HasPrefix(d.s[d.at:], "false"):
		d.at += 5
		return lua.LFalse, ""
	case strings.HasPrefix(d.s[d.at:], "null"):
		d.at += 4
		return d.null, ""
	case c == '-' || (c >= '0' && c <= '9'):
		start := d.at
		for d.at < len(d.s) && strings.IndexByte("+-0123456789.eE", d.s[d.at]) >= 0 {
			d.at++
		}
		f, err := strconv.ParseFloat(d.s[start:d.at], 64)
		if err != nil {
			d.at = start
			return d.fail("value")
		}
		return lua.LNumber(f), ""
	}
	return d.fail("value")
}

func (d *decoder) nest() string {
	d.depth++
	if d.depth > 1000 {
		return fmt.Sprintf("Found too many nested data structures (%d) at character %d", d.depth, d.at+1)
	}
	return ""
}

func (d *decoder) object() (lua.LValue, string) {
	if msg := d.nest(); msg != "" {
		return lua.LNil, msg
	}
	defer func() { d.depth-- }()
	t := d.L.NewTable()
	d.at++
	d.space()
	if d.at < len(d.s) && d.s[d.at] == '}' {
		d.at++
		return t, ""
	}
	for {
		d.space()
		if d.at >= len(d.s) || d.s[d.at] != '"' {
			return d.fail("object key string")
		}
		key, msg := d.str()
		if msg != "" {
			return lua.LNil, msg
		}
		d.space()
		if d.at >= len(d.s) || d.s[d.at] != ':' {
			return d.fail("colon")
		}
		d.at++
		item, msg := d.value()
		if msg != "" {
			return lua.LNil, msg
		}
		t.RawSetString(key, item)
		d.space()
		if d.at < len(d.s) && d.s[d.at] == ',' {
			d.at++
			continue
		}
		if d.at < len(d.s) && d.s[d.at] == '}' {
			d.at++
			return t, ""
		}
		return d.fail("comma or object end")
	}
}

func (d *decoder) array() (lua.LValue, string) {
	if msg := d.nest(); msg != "" {
		return lua.LNil, msg
	}
	defer func() { d.depth-- }()
	t := d.L.NewTable()
	d.at++
	d.space()
	if d.at < len(d.s) && d.s[d.at] == ']' {
		d.at++
		return t, ""
	}
	for i := 1; ; i++ {
		item, msg := d.value()
		if msg != "" {
			return lua.LNil, msg
		}
		t.RawSetInt(i, item)
		d.space()
		if d.at < len(d.s) && d.s[d.at] == ',' {
			d.at++
			continue
		}
		if d.at < len(d.s) && d.s[d.at] == ']' {
			d.at++
			return t, ""
		}
		return d.fail("comma or array end")
	}
}

func (d *decoder) hex4() (rune, bool) {
	if d.at+4 > len(d.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(d.s[d.at:d.at+4], 16, 32)
	if err != nil {
		return 0, false
	}
	d.at += 4
	return rune(n), true
}

// str reads a JSON string: bytes as they are, escapes decoded, a surrogate pair as one code
// point and a lone surrogate refused (lua-cjson's decode_unicode_escape).
func (d *decoder) str() (string, string) {
	d.at++
	var b strings.Builder
	for {
		if d.at >= len(d.s) {
			_, msg := d.fail("string end")
			return "", msg
		}
		c := d.s[d.at]
		if c == '"' {
			d.at++
			return b.String(), ""
		}
		if c != '\\' {
			b.WriteByte(c)
			d.at++
			continue
		}
		d.at++
		if d.at >= len(d.s) {
			_, msg := d.fail("escape")
			return "", msg
		}
		esc := d.s[d.at]
		d.at++
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				_, msg := d.fail("unicode escape")
				return "", msg
			}
			if r >= 0xdc00 && r <= 0xdfff {
				_, msg := d.fail("unicode escape")
				return "", msg
			}
			if r >= 0xd800 && r <= 0xdbff {
				if !strings.HasPrefix(d.s[d.at:], "\\u") {
					_, msg := d.fail("unicode escape")
					return "", msg
				}
				d.at += 2
				low, ok := d.hex4()
				if !ok || low < 0xdc00 || low > 0xdfff {
					_, msg := d.fail("unicode escape")
					return "", msg
				}
				r = 0x10000 + ((r - 0xd800) << 10) + (low - 0xdc00)
			}
			var buf [4]byte
			b.Write(buf[:utf8.EncodeRune(buf[:], r)])
		default:
			d.at -= 2
			_, msg := d.fail("valid escape")
			return "", msg
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Client connections

type session struct {
	e      *engine
	up     *upstream
	multi  bool
	queued [][]string
	// A command refused while queuing: EXEC then discards the transaction, as Redis does.
	dirty bool
}

// queueError is what Redis answers a command it refuses to queue (unknown, or a wrong number of
// arguments), or ok false when it queues it.
func (s *session) queueError(args []string) (value, bool) {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	if err := s.e.loadCommands(s.up); err != nil {
		return errorf("ERR %s", err.Error()), true
	}
	info, known := s.e.commands[strings.ToLower(args[0])]
	if !known {
		return errorf("ERR unknown command '%s'", args[0]), true
	}
	if (info.arity > 0 && len(args) != info.arity) || (info.arity < 0 && len(args) < -info.arity) {
		return arity(args[0]), true
	}
	return value{}, false
}

// handle answers one command; a non-nil error closes the client's connection (redis-server
// was lost).
func (s *session) handle(args []string) (value, error) {
	name := strings.ToUpper(args[0])
	if s.multi {
		switch name {
		case "EXEC":
			s.multi = false
			queued, dirty := s.queued, s.dirty
			s.queued, s.dirty = nil, false
			if dirty {
				return errorf("EXECABORT Transaction discarded because of previous errors."), nil
			}
			s.e.mu.Lock()
			defer s.e.mu.Unlock()
			replies := make([]value, 0, len(queued))
			for _, command := range queued {
				reply, err := s.execute(command)
				if err != nil {
					return value{}, err
				}
				replies = append(replies, reply)
			}
			return array(replies), nil
		case "DISCARD":
			s.multi, s.queued, s.dirty = false, nil, false
			return okValue(), nil
		case "MULTI":
			return errorf("ERR MULTI calls can not be nested"), nil
		case "WATCH":
			return errorf("ERR WATCH inside MULTI is not allowed"), nil
		}
		if refusal, refused := s.queueError(args); refused {
			s.dirty = true
			return refusal, nil
		}
		s.queued = append(s.queued, args)
		return status("QUEUED"), nil
	}
	switch name {
	case "MULTI":
		s.multi, s.queued, s.dirty = true, nil, false
		return okValue(), nil
	case "EXEC", "DISCARD":
		return errorf("ERR %s without MULTI", name), nil
	case "WATCH", "UNWATCH":
		return errorf("ERR %s is not supported here: MULTI is queued by the gopher-lua proxy", name), nil
	case "MONITOR", "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE":
		return errorf("ERR %s is not supported here: connect to redis-server itself", name), nil
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	return s.execute(args)
}

// execute runs one command, the lock held.
func (s *session) execute(args []string) (value, error) {
	e := s.e
	name := strings.ToUpper(args[0])
	switch name {
	case "EVAL", "EVAL_RO", "EVALSHA", "EVALSHA_RO":
		if len(args) < 3 {
			return arity(name), nil
		}
		numkeys, err := strconv.Atoi(args[2])
		if err != nil {
			return errorf("ERR value is not an integer or out of range"), nil
		}
		if numkeys < 0 {
			return errorf("ERR Number of keys can't be negative"), nil
		}
		if numkeys > len(args)-3 {
			return errorf("ERR Number of keys can't be greater than number of args"), nil
		}
		var sha string
		var sc *script
		if name == "EVAL" || name == "EVAL_RO" {
			var failure value
			if sha, sc, failure = e.load(args[1]); sc == nil {
				return failure, nil
			}
		} else {
			sha = strings.ToLower(args[1])
			if sc = e.scripts[sha]; sc == nil {
				return noscript(), nil
			}
		}
		readOnly := name == "EVAL_RO" || name == "EVALSHA_RO"
		return e.run(sha, sc, s.up, args[3:3+numkeys], args[3+numkeys:], readOnly)
	case "SCRIPT":
		if len(args) < 2 {
			return arity(name), nil
		}
		switch strings.ToUpper(args[1]) {
		case "LOAD":
			if len(args) != 3 {
				return errorf("ERR unknown subcommand or wrong number of arguments for 'load'"), nil
			}
			sha, sc, failure := e.load(args[2])
			if sc == nil {
				return failure, nil
			}
			return bulk(sha), nil
		case "EXISTS":
			if len(args) < 3 {
				return errorf("ERR unknown subcommand or wrong number of arguments for 'exists'"), nil
			}
			out := make([]value, 0, len(args)-2)
			for _, sha := range args[2:] {
				if e.scripts[strings.ToLower(sha)] != nil {
					out = append(out, integer(1))
				} else {
					out = append(out, integer(0))
				}
			}
			return array(out), nil
		case "FLUSH":
			e.scripts = map[string]*script{}
			return okValue(), nil
		}
	}
	return s.up.do(args)
}

func serve(e *engine, conn net.Conn, redisAddr string) {
	defer conn.Close()
	up, err := dial(redisAddr)
	if err != nil {
		return
	}
	defer up.conn.Close()
	s := &session{e: e, up: up}
	r := bufio.NewReaderSize(conn, 64*1024)
	w := bufio.NewWriterSize(conn, 64*1024)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		if strings.ToUpper(args[0]) == "QUIT" {
			writeValue(w, okValue())
			w.Flush()
			return
		}
		reply, err := s.handle(args)
		if err != nil {
			return
		}
		writeValue(w, reply)
		// Answers to pipelined commands go out together, once no more is buffered.
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

func main() {
	redisPort := flag.Int("redis-port", 6379, "the redis-server's port on 127.0.0.1")
	port := flag.Int("port", 0, "the port to listen on, 127.0.0.1 (0: a free one)")
	flag.Parse()
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("PORT %d\n", listener.Addr().(*net.TCPAddr).Port)
	go func() {
		// The test process holds standard input: once it is gone, so is this process.
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	e := newEngine()
	redisAddr := fmt.Sprintf("127.0.0.1:%d", *redisPort)
	for {
		conn, err := listener.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			tcp.SetNoDelay(true)
		}
		go serve(e, conn, redisAddr)
	}
}
