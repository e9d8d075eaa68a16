// Independent check of an `lscat dataset export`, as researchers load it: every column of
// every table, read by hyparquet (pure JS), DuckDB (@duckdb/node-api) and nodejs-polars — or,
// for CSV, by an RFC 4180 parser written here and by DuckDB — must have the expected type
// (timestamps are timestamps, lists are lists, ints ints, NULL NULL) and the same checksum of
// its values as the store, queried through the sqlite3 CLI with SQL written here (not the
// exporter's), and the kernels' source files. DuckDB and polars run the loading lines of the
// export's data card (README.md) exactly as written there. Prints one "ok - " or "not ok - "
// line per check, as tests/run.sh expects.
// Usage: node check.mjs parquet|csv|csv.gz|csv.zst EXPORT_DIR STORE.db WORK_DIR [prefix [since]]
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync, existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { parquetReadObjects, parquetMetadataAsync, asyncBufferFromFile } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { DuckDBInstance } from '@duckdb/node-api'
import pl from 'nodejs-polars'

const [format, dirArg, dbArg, workArg, prefix = 'export', since = ''] = process.argv.slice(2)
const [dir, db, work] = [dirArg, dbArg, workArg].map(p => resolve(p))
const sinceM = since ? ` AND m.measured_at >= '${since}'` : ''
let failed = 0
const ok = (name) => console.log(`ok - ${prefix}_${name}`)
const notOk = (name, why) => { failed++; console.log(`not ok - ${prefix}_${name}: ${why}`) }

// ------------------------------------------------------------------ what the store says
// Columns: [name, SQL expression, kind]. Kinds: text i32 i64 real bool ts list (JSON array text)
// words (comma-separated) sep (char(31)-separated, '' = empty list) params json:<key> source bytes.
const K = 'k.'
const build = (c) => `(SELECT b.${c} FROM builds b WHERE b.kernel_id = k.id ORDER BY b.status = 'ok' DESC, b.built_at DESC LIMIT 1)`
const sorted = (col, extra = '') => `(SELECT group_concat(v, char(31)) FROM (SELECT DISTINCT p.${col} AS v FROM probes p WHERE p.kernel_id = k.id${extra} ORDER BY 1))`
const probed = 'EXISTS (SELECT 1 FROM probes p WHERE p.kernel_id = k.id)'
const tables = {
  kernels: {
    from: 'kernels k ORDER BY k.id',
    cols: [['id', K + 'id', 'text'], ['name', K + 'name', 'text'], ['template_args', K + 'template_args', 'text'],
      ['status', K + 'status', 'text'], ['param_count', K + 'param_count', 'i32'], ['roles_known', K + 'roles_known', 'i32'],
      ['params', K + 'params', 'params'], ['is2d', K + 'params', 'json:is2d'], ['dynamic_shared', K + 'params', 'json:dynamic_shared'],
      ['device_launch', K + 'params', 'json:device_launch'], ['source_bytes', K + 'source_bytes', 'i64'],
      ['occurrences', '(SELECT count(*) FROM kernel_occurrences x WHERE x.kernel_id = k.id)', 'i64'],
      ['build_arch', build('arch'), 'text'], ['build_status', build('status'), 'text'], ['build_attempts', build('attempts'), 'i32'],
      ['repairs', build('fixes'), 'list'], ['nvcc_version', build('nvcc_version'), 'text'], ['registers', build('registers'), 'i32'],
      ...['shared', 'stack', 'spill_store', 'spill_load', 'const'].map(c => [`${c}_bytes`, build(`${c}_bytes`), 'i64']),
      ['probe_outcomes', `CASE WHEN ${probed} THEN ${sorted('outcome')} END`, 'sep'],
      ['sanitizer', `CASE WHEN ${probed} THEN coalesce(${sorted('sanitizer', ' AND p.sanitizer IS NOT NULL')}, '') END`, 'sep'],
      ['binding', K + 'binding', 'text'], ['created_at', K + 'created_at', 'ts']],
  },
  sources: { from: 'kernels k ORDER BY k.id', cols: [['kernel_id', K + 'id', 'text'], ['source', K + 'dir', 'source']] },
  sources_raw: { from: 'kernels k ORDER BY k.id', rawOnly: true, cols: [['kernel_id', K + 'id', 'text'], ['source_raw', K + 'dir', 'bytes']] },
  occurrences: {
    from: 'kernel_occurrences o JOIN sources s ON s.id = o.source_id LEFT JOIN repos r ON r.id = s.repo_id ORDER BY o.kernel_id, r.full_name, o.path, o.line',
    cols: [['kernel_id', 'o.kernel_id', 'text'], ['repository', 'r.full_name', 'text'], ['commit', 'r.commit_sha', 'text'],
      ['path', 'o.path', 'text'], ['line', 'o.line', 'i32']],
  },
  repositories: {
    from: 'repos r ORDER BY r.full_name',
    cols: [['repository', 'r.full_name', 'text'], ['github_id', 'r.github_id', 'i64'], ['commit', 'r.commit_sha', 'text'],
      ['default_branch', 'r.default_branch', 'text'], ['fetched_at', 'r.fetched_at', 'ts'], ['license', 'r.license_spdx', 'text'],
      ['evidence', 'r.evidence', 'words'], ['language', 'r.language', 'text'], ['source', 'r.source', 'text'],
      ['first_seen', 'r.first_seen', 'ts'], ['last_seen', 'r.last_seen', 'ts'], ['fetch_status', 'r.fetch_status', 'text'],
      ['files_kept', 'r.files_kept', 'i64'],
      ['kernels', '(SELECT count(DISTINCT o.kernel_id) FROM kernel_occurrences o JOIN sources s ON s.id = o.source_id WHERE s.repo_id = r.id)', 'i64']],
  },
  measurements: {
    from: `measurements m, gpus g WHERE g.id = m.gpu_id AND NOT m.superseded${sinceM} ORDER BY m.kernel_id, m.gpu_id, m.width, m.height, m.block_x, m.block_y, m.block_z`,
    cols: [['kernel_id', 'm.kernel_id', 'text'], ['gpu', 'g.name', 'text'], ['gpu_uuid', 'g.uuid', 'text'],
      ...['width', 'height', 'block_x', 'block_y', 'block_z', 'grid_x', 'grid_y', 'grid_z'].map(c => [c, `m.${c}`, 'i32']),
      ['status', 'm.status', 'text'], ['error', 'm.error', 'text'],
      ...['median', 'min', 'max', 'mean', 'stddev', 'mad', 'p10', 'p90'].map(s => [`${s}_ns`, `m.${s}_ns`, 'real']),
      ...['samples', 'launches_per_sample', 'graph_nodes', 'sm_clock_mhz_before', 'sm_clock_mhz_after', 'mem_clock_mhz',
        'temp_c_before', 'temp_c_after'].map(c => [c, `m.${c}`, 'i32']),
      ['clocks_locked', 'm.clocks_locked', 'bool'], ['l2_flush', 'm.l2_flush', 'bool'], ['binding', 'm.binding', 'text'],
      ['measured_at', 'm.measured_at', 'ts']],
  },
  failures: {
    from: `failures f WHERE f.created_at >= '${since}' ORDER BY f.id`,
    cols: [['stage', 'f.stage', 'text'], ['subject', 'f.subject', 'text'], ['kernel_id', 'f.kernel_id', 'text'],
      ['class', 'f.class', 'text'], ['message', 'f.message', 'text'], ['created_at', 'f.created_at', 'ts']],
  },
  gpus: {
    from: 'gpus g ORDER BY g.name, g.uuid',
    cols: [['uuid', 'g.uuid', 'text'], ['model', 'g.name', 'text'], ['compute_capability', 'g.compute_cap', 'text'],
      ['memory_bytes', 'g.memory_bytes', 'i64'], ['sm_count', 'g.sm_count', 'i32'], ['driver_version', 'g.driver_version', 'text'],
      ['cuda_version', 'g.cuda_version', 'text'],
      ...[['sm_clock_mhz_mean', 'sm_clock_mhz_before'], ['mem_clock_mhz_mean', 'mem_clock_mhz']].map(([n, c]) =>
        [n, `(SELECT CAST(round(avg(m.${c})) AS INTEGER) FROM measurements m WHERE m.gpu_id = g.id AND m.superseded = 0${sinceM})`, 'i32']),
      ['measurements', `(SELECT count(*) FROM measurements m WHERE m.gpu_id = g.id AND m.superseded = 0${sinceM})`, 'i64'],
      ['first_seen', 'g.first_seen', 'ts']],
  },
}
const PARAM_FIELDS = ['name', 'type', 'canonical', 'kind', 'role', 'pointer', 'const', 'elem', 'elem_bytes', 'bits', 'float',
  'bytes', 'template_dependent']

function storeRows(t) {
  const sel = t.cols.map(([, e, kind], i) =>
    `${kind === 'real' ? `CASE WHEN ${e} IS NULL THEN NULL ELSE printf('%!.17g', ${e}) END` : `CAST(${e} AS TEXT)`} AS c${i}`).join(', ')
  const out = execFileSync('sqlite3', ['-json', db, `SELECT ${sel} FROM ${t.from}`], { maxBuffer: 1 << 28 }).toString()
  let rows = out.trim() ? JSON.parse(out) : []
  if (t.rawOnly) rows = rows.filter(r => { const f = sourceFile(r.c1); return f && !validUtf8(f) })
  return rows.map(r => t.cols.map((c, i) => r[`c${i}`] ?? null))
}

// ------------------------------------------------------------------ canonical values
// Every value becomes one string; a column's checksum is the SHA-256 of its strings.
const NULL = '\u0000null'
function tsMicros(text) { // ISO-8601 as the store writes it (UTC, Z or offset, fraction)
  const m = /^(\d{4}-\d\d-\d\d)(?:[T ](\d\d:\d\d(?::\d\d)?)(?:[.,](\d+))?)?(Z|[+-]\d\d:?\d\d)?$/.exec(text)
  if (!m) return `bad time ${text}`
  const zone = !m[4] || m[4] === 'Z' ? 'Z' : m[4].length === 5 ? `${m[4].slice(0, 3)}:${m[4].slice(3)}` : m[4]
  const ms = Date.parse(`${m[1]}T${m[2] || '00:00:00'}${zone}`)
  return String(BigInt(ms) * 1000n + BigInt((m[3] || '').padEnd(6, '0').slice(0, 6)))
}
function paramCanon(p) {
  return PARAM_FIELDS.map(f => f === 'pointer' ? (typeof p.kind === 'string' ? p.kind === 'pointer' : null) : (p[f] ?? null))
}
function paramsList(json) { // isolate's object {params: [...]} or a bare array (older stores)
  const v = JSON.parse(json)
  return Array.isArray(v) ? v : v.params
}
const wantFns = {
  text: v => v, i32: v => v, i64: v => v, bool: v => (v === '1' ? 'true' : 'false'), real: v => String(Number(v)),
  ts: v => tsMicros(v), list: v => JSON.stringify(JSON.parse(v)), words: v => JSON.stringify(v === '' ? [] : v.split(',')),
  sep: v => JSON.stringify(v === '' ? [] : v.split('\u001f')), params: v => JSON.stringify(paramsList(v).map(paramCanon)),
  source: v => { const f = sourceFile(v); return f === null ? NULL : repair(f) },
  bytes: v => Buffer.from(sourceFile(v)).toString('hex'),
}
function want(kind, v) {
  if (kind.startsWith('json:')) { const x = v === null ? undefined : JSON.parse(v)[kind.slice(5)]; return typeof x === 'boolean' ? String(x) : NULL }
  if (v === null && kind !== 'source') return NULL
  return wantFns[kind](v)
}

// A reader's value (after plain()) in the same form.
function got(kind, v) {
  if (v === null || v === undefined) return NULL
  if (kind === 'bool' || kind.startsWith('json:')) return typeof v === 'boolean' ? String(v) : `not a boolean: ${v}`
  if (kind === 'real') return typeof v === 'number' ? String(v) : `not a number: ${v}`
  if (kind === 'i32' || kind === 'i64') return typeof v === 'number' || typeof v === 'bigint' ? String(v) : `not an integer: ${v}`
  if (kind === 'ts') return typeof v === 'bigint' ? String(v) : `not a timestamp: ${v}`
  if (kind === 'list' || kind === 'words' || kind === 'sep') return Array.isArray(v) ? JSON.stringify(v) : `not a list: ${v}`
  if (kind === 'params') return Array.isArray(v) ? JSON.stringify(v.map(p => PARAM_FIELDS.map(f => p[f] ?? null))) : `not a list: ${v}`
  if (kind === 'bytes') return v instanceof Uint8Array ? Buffer.from(v).toString('hex') : `not bytes: ${v}`
  return typeof v === 'string' ? v : `not a string: ${v}`
}

// The readable form lscat promises: valid UTF-8 kept, each invalid byte as U+0080..U+00FF.
function repair(bytes) {
  let s = ''
  for (let i = 0; i < bytes.length;) {
    const n = seqLen(bytes, i)
    if (n) { s += Buffer.from(bytes.subarray(i, i + n)).toString('utf8'); i += n } else { s += String.fromCharCode(bytes[i]); i++ }
  }
  return s
}
function seqLen(b, i) {
  const c = b[i]
  if (c < 0x80) return 1
  const len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0
  if (!len || i + len > b.length) return 0
  let cp = c & (0x7F >> len)
  for (let k = 1; k < len; k++) { if ((b[i + k] & 0xC0) !== 0x80) return 0; cp = (cp << 6) | (b[i + k] & 0x3F) }
  if (cp < [0, 0, 0x80, 0x800, 0x10000][len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0
  return len
}
function sourceFile(d) {
  const p = d.startsWith('/') ? `${d}/kernel.cu` : d.startsWith('kernels/') ? `${work}/${d}/kernel.cu` : `${work}/kernels/${d}/kernel.cu`
  return existsSync(p) ? new Uint8Array(readFileSync(p)) : null
}
const validUtf8 = (b) => { try { new TextDecoder('utf-8', { fatal: true }).decode(b); return true } catch { return false } }
const sha = (strings) => createHash('sha256').update(strings.join('\u001e')).digest('hex').slice(0, 16)

// ------------------------------------------------------------------ types per reader
const duckTypes = { text: /^VARCHAR$/, i32: /^INTEGER$/, i64: /^BIGINT$/, real: /^DOUBLE$/, bool: /^BOOLEAN$/,
  ts: /^TIMESTAMP WITH TIME ZONE$/, list: /^VARCHAR\[\]$/, words: /^VARCHAR\[\]$/, sep: /^VARCHAR\[\]$/,
  params: /^STRUCT\("name" VARCHAR, "type" VARCHAR, .*"template_dependent" BOOLEAN\)\[\]$/, source: /^VARCHAR$/, bytes: /^BLOB$/ }
const polarsTypes = { text: /^String$/, i32: /^Int32$/, i64: /^Int64$/, real: /^Float64$/, bool: /^Bool$/,
  ts: /^Datetime\(us,UTC\)$/, list: /^List\(String\)$/, words: /^List\(String\)$/, sep: /^List\(String\)$/,
  params: /^List\(Struct\(Field\("name", String\),.*Field\("template_dependent", Bool\)\)\)$/, source: /^String$/, bytes: /^Binary$/ }
const typeOf = (kind, table) => kind.startsWith('json:') ? table.bool : table[kind]
// CSV read by DuckDB with the card's types: lists and bytes are VARCHAR (JSON / base64 text).
const csvKind = (kind) => ['list', 'words', 'sep', 'params', 'bytes'].includes(kind) ? 'text' : kind

// ------------------------------------------------------------------ compare
// rows: the reader's rows as objects of plain values; types: column -> type name (or null).
function check(reader, table, names, rows, types, typeTable, gotFn = got) {
  const t = tables[table]
  const want_ = storeRows(t)
  const cols = t.cols.map(c => c[0])
  if (JSON.stringify(names) !== JSON.stringify(cols)) return notOk(`${reader}_${table}_columns`, `file has ${names.join(',')}; expected ${cols.join(',')}`)
  if (rows.length !== want_.length) return notOk(`${reader}_${table}_values`, `${rows.length} rows, store has ${want_.length}`)
  for (let c = 0; c < cols.length; c++) {
    const [name, , kind] = t.cols[c]
    const re = typeTable && typeOf(kind, typeTable)
    if (re && !re.test(types[name])) return notOk(`${reader}_${table}_types`, `${name} is ${types[name]}, expected ${re}`)
    const w = want_.map(r => want(kind, r[c])), g = rows.map(r => gotFn(kind, r[name]))
    if (sha(w) !== sha(g)) {
      const i = w.findIndex((x, k) => x !== g[k])
      return notOk(`${reader}_${table}_values`, `column ${name} checksum ${sha(g)} != store ${sha(w)}; row ${i}: want ${JSON.stringify(w[i]).slice(0, 80)}, got ${JSON.stringify(g[i]).slice(0, 80)}`)
    }
  }
  ok(`${reader}_${table}_every_column_has_its_type_and_the_store_checksum`)
}

// DuckDB values to plain JS: lists to arrays, structs to objects, timestamps to bigint micros.
function plain(v) {
  if (v === null || v === undefined || typeof v !== 'object') return v
  if (Array.isArray(v.items)) return v.items.map(plain)
  if (v.entries && typeof v.entries === 'object') return Object.fromEntries(Object.entries(v.entries).map(([k, x]) => [k, plain(x)]))
  if (typeof v.micros === 'bigint') return v.micros
  if (v.bytes instanceof Uint8Array) return v.bytes
  return v
}

// The card's loading line for a reader and table (the measurements line for Parquet, where one
// line serves every table).
const card = existsSync(`${dir}/README.md`) ? readFileSync(`${dir}/README.md`, 'utf8').split('\n') : []
function cardLine(label, file) {
  const line = card.find(l => l.startsWith(`${label}: `) && l.includes(`'${file}'`)) ||
    card.find(l => l.startsWith(`${label}: `) && l.includes("'measurements.parquet'"))
  if (!line) return null
  return line.slice(label.length + 2).trim().replace("'measurements.parquet'", `'${file}'`)
}

async function duckRead(duck, table, file, csv) {
  const sql = cardLine('DuckDB', file)
  if (!sql) return notOk(`duckdb_${table}_card_line`, 'no DuckDB line in README.md')
  const res = await duck.runAndReadAll(sql)
  const names = res.columnNames()
  const types = Object.fromEntries(names.map((n, i) => [n, String(res.columnTypes()[i])]))
  const rows = res.getRowObjects().map(r => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, plain(v)])))
  if (!csv) return check('duckdb', table, names, rows, types, duckTypes)
  const t = tables[table]
  const kinds = Object.fromEntries(t.cols.map(([n, , k]) => [n, k]))
  const csvGot = (kind, v) => csvValue(kind, v)
  check('duckdb_csv', table, names, rows, Object.fromEntries(names.map(n => [n, types[n]])),
    Object.fromEntries(Object.keys(duckTypes).map(k => [k, duckTypes[csvKind(k)]])), csvGot)
  void kinds
}

// A CSV text field as the canonical form of its kind (lists are JSON text, bytes base64).
function csvValue(kind, v) {
  if (v === null || v === undefined) return NULL
  if (typeof v !== 'string') return got(kind, v) // DuckDB typed the column
  if (kind === 'list' || kind === 'words' || kind === 'sep') return JSON.stringify(JSON.parse(v))
  if (kind === 'params') return JSON.stringify(JSON.parse(v).map(paramCanon))
  if (kind === 'bytes') return Buffer.from(v, 'base64').toString('hex')
  if (kind === 'ts') return tsMicros(v)
  if (kind === 'bool' || kind.startsWith('json:')) return v === 'true' || v === 'false' ? v : `not a boolean: ${v}`
  if (kind === 'real') return String(Number(v))
  return v
}

// RFC 4180 parser: returns rows of fields; an unquoted empty field is null.
function parseCsv(text) {
  const rows = []; let row = []; let i = 0
  while (i < text.length) {
    let f
    if (text[i] === '"') {
      f = ''; i++
      for (;;) {
        const q = text.indexOf('"', i)
        if (q < 0) throw new Error('unterminated quote')
        f += text.slice(i, q); i = q + 1
        if (text[i] === '"') { f += '"'; i++ } else break
      }
    } else {
      let j = i
      while (j < text.length && text[j] !== ',' && text[j] !== '\r') j++
      f = j === i ? null : text.slice(i, j); i = j
    }
    row.push(f)
    if (text[i] === ',') { i++; continue }
    if (text.startsWith('\r\n', i)) { i += 2; rows.push(row); row = []; continue }
    if (i < text.length) throw new Error(`bad character at ${i}`)
  }
  if (row.length) rows.push(row)
  return rows
}

// hyparquet: types from the file's schema (the leaf or LIST group of each top-level column).
function hyparquetTypes(md) {
  const out = {}
  const s = md.schema
  for (let i = 1, n = 0; n < s[0].num_children; n++) {
    const e = s[i]
    const lt = e.logical_type || {}
    out[e.name] = e.converted_type === 'LIST' ? `LIST<${s[i + 2].num_children ? 'STRUCT' : s[i + 2].type}>`
      : lt.type === 'TIMESTAMP' ? `TIMESTAMP(${lt.isAdjustedToUTC},${lt.unit})` : `${e.type}${lt.type === 'STRING' ? '/STRING' : ''}`
    i += 1 + (e.num_children ? subtree(s, i) : 0)
  }
  return out
}
function subtree(s, i) { let n = 0; for (let k = 0, c = s[i].num_children; k < c; k++) { n += 1; n += s[i + n].num_children ? subtree(s, i + n) : 0 } return n }
const hyTypes = { text: /^BYTE_ARRAY\/STRING$/, i32: /^INT32$/, i64: /^INT64$/, real: /^DOUBLE$/, bool: /^BOOLEAN$/,
  ts: /^TIMESTAMP\(true,MICROS\)$/, list: /^LIST<BYTE_ARRAY>$/, words: /^LIST<BYTE_ARRAY>$/, sep: /^LIST<BYTE_ARRAY>$/,
  params: /^LIST<STRUCT>$/, source: /^BYTE_ARRAY\/STRING$/, bytes: /^BYTE_ARRAY$/ }

// "List(Struct(Field("name", String), ...))": the dtype without polars' DataType() wrappers.
// BINARY has no JS dtype (polars throws): it is named by the error.
function polarsType(df, name) {
  let s
  try { s = String(df.getColumn(name).dtype) } catch (e) { return /Binary/.test(e.message) ? 'Binary' : e.message }
  let out = ''
  const stack = []
  for (let i = 0; i < s.length;) {
    if (s.startsWith('DataType(', i)) { stack.push(true); i += 9 } else if (s[i] === '(') { stack.push(false); out += s[i++] } else if (s[i] === ')') { if (!stack.pop()) out += ')'; i++ } else out += s[i++]
  }
  return out
}

function polarsRead(table, file) {
  const expr = cardLine('nodejs-polars', file)
  if (!expr) return notOk(`polars_${table}_card_line`, 'no nodejs-polars line in README.md')
  const df = new Function('pl', `return ${expr}`)(pl)
  const types = Object.fromEntries(df.columns.map(n => [n, polarsType(df, n)]))
  const t = tables[table]
  // JS conversion: timestamps as their Int64 microseconds (a JS Date holds milliseconds);
  // BINARY cannot be converted to JS as it is (polars' limit): as a list of bytes, as the card says.
  const casts = t.cols.filter(([, , k]) => k === 'ts' || k === 'bytes')
    .map(([n, , k]) => pl.col(n).cast(k === 'ts' ? pl.Int64 : pl.List(pl.UInt8)))
  const rows = (casts.length ? df.withColumns(...casts) : df).toRecords()
  const polarsGot = (kind, v) => kind === 'ts' && typeof v === 'number' ? String(BigInt(v))
    : kind === 'bytes' && Array.isArray(v) ? Buffer.from(v).toString('hex') : got(kind, v)
  check('polars', table, df.columns, rows, types, polarsTypes, polarsGot)
}

// ------------------------------------------------------------------ run
process.chdir(dir) // the card's lines name the files relative to the export folder
const names = Object.keys(tables).filter(t => existsSync(`${t}.${format}`))
if (names.length === 0) notOk('files', `no ${format} files in ${dir}`)
const duck = await (await DuckDBInstance.create(':memory:')).connect()
if (format === 'parquet') {
  for (const table of names) {
    const path = `${table}.parquet`
    const file = await asyncBufferFromFile(path)
    const md = await parquetMetadataAsync(file)
    const kv = Object.fromEntries((md.key_value_metadata || []).map(x => [x.key, x.value]))
    if (kv['lscat.table'] === table && kv['lscat.schema_version'] && kv['lscat.export_time']) ok(`${table}_has_key_value_metadata`)
    else notOk(`${table}_has_key_value_metadata`, JSON.stringify(kv))
    const rows = await parquetReadObjects({ file, compressors, utf8: false, parsers: { timestampFromMicroseconds: (us) => BigInt(us) } })
    const hyNames = md.schema.slice(1).filter((e, i, a) => true).length ? Object.keys(hyparquetTypes(md)) : []
    check('hyparquet', table, hyNames, rows.map(r => Object.fromEntries(Object.entries(r).map(([k, v]) =>
      [k, tables[table].cols.find(c => c[0] === k)?.[2] === 'source' && v instanceof Uint8Array ? new TextDecoder().decode(v) : v]))),
    hyparquetTypes(md), hyTypes)
    checkStatistics(table, md, rows)
    await duckRead(duck, table, path, false)
    polarsRead(table, path)
  }
  if (names.includes('kernels')) {
    const sql = cardLine('DuckDB parameters', 'kernels.parquet')
    const n = Number(execFileSync('sqlite3', [db, "SELECT coalesce(sum(json_array_length(coalesce(json_extract(params, '$.params'), params))), 0) FROM kernels"]).toString())
    const res = sql ? await duck.runAndReadAll(sql) : null
    if (res && res.getRowObjects().length === n && res.columnNames().includes('role')) ok('duckdb_unnests_params_into_one_row_per_parameter')
    else notOk('duckdb_unnests_params_into_one_row_per_parameter', res ? `${res.getRowObjects().length} rows (want ${n}): ${res.columnNames()}` : 'no card line')
  }
} else {
  for (const table of names) {
    const path = `${table}.${format}`
    let buf = readFileSync(path)
    if (format.endsWith('.gz')) buf = gunzipSync(buf)
    if (format.endsWith('.zst')) buf = execFileSync('zstd', ['-dc', path], { maxBuffer: 1 << 30 })
    if (!validUtf8(new Uint8Array(buf))) notOk(`csv_${table}_is_utf8`, 'invalid UTF-8')
    let parsed
    try { parsed = parseCsv(buf.toString('utf8')) } catch (e) { notOk(`csv_${table}_parses`, e.message); continue }
    const [header, ...body] = parsed
    check('csv', table, header, body.map(f => Object.fromEntries(header.map((h, i) => [h, f[i]]))), {}, null, csvValue)
    await duckRead(duck, table, path, true)
  }
}

// Statistics of every flat column chunk agree with its values (lists: null counts only).
function checkStatistics(table, md, rows) {
  let bad = null, rowBase = 0
  for (const rg of md.row_groups) {
    const n = Number(rg.num_rows)
    for (const cc of rg.columns) {
      const path = cc.meta_data.path_in_schema
      const st = cc.meta_data.statistics || {}
      if (path.length > 1) { if (st.null_count === undefined) bad = `${path.join('.')}: no null_count`; continue }
      const vals = rows.slice(rowBase, rowBase + n).map(r => r[path[0]])
      const nulls = vals.filter(v => v === null || v === undefined).length
      if (Number(st.null_count) !== nulls) bad = `${path[0]}: null_count ${st.null_count}, counted ${nulls}`
      const nn = vals.filter(v => v !== null && v !== undefined && typeof v !== 'object')
      if (nn.length && st.min_value !== undefined && typeof nn[0] !== 'string') {
        const mn = nn.reduce((a, b) => (b < a ? b : a)), mx = nn.reduce((a, b) => (b > a ? b : a))
        const norm = (x) => typeof x === 'bigint' ? String(x) : x instanceof Date ? String(BigInt(x.getTime()) * 1000n) : String(x)
        if (norm(st.min_value) !== String(mn) || norm(st.max_value) !== String(mx)) bad = `${path[0]}: stats ${st.min_value}..${st.max_value}, values ${mn}..${mx}`
      }
    }
    rowBase += n
  }
  if (bad) notOk(`${table}_statistics_match_values`, bad); else ok(`${table}_statistics_match_values`)
}
process.exit(failed ? 1 : 0)
