// Independent check of an `lscat dataset export`: reads the files with hyparquet (pure JS)
// and DuckDB (@duckdb/node-api) — or parses the CSV with its own RFC 4180 parser — and
// compares every value with the store, queried through the sqlite3 CLI with SQL written here
// (not the exporter's), and with the kernels' source files. Prints one "ok - " or "not ok - "
// line per check, as tests/run.sh expects.
// Usage: node check.mjs parquet|csv|csv.gz EXPORT_DIR STORE.db WORK_DIR [name-prefix [since]]
import { execFileSync } from 'node:child_process'
import { readFileSync, existsSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { parquetReadObjects, parquetMetadataAsync, asyncBufferFromFile } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { DuckDBInstance } from '@duckdb/node-api'

const [format, dir, db, work, prefix = 'export', since = ''] = process.argv.slice(2)
const sinceM = since ? ` AND m.measured_at >= '${since}'` : ''
let failed = 0
const ok = (name) => console.log(`ok - ${prefix}_${name}`)
const notOk = (name, why) => { failed++; console.log(`not ok - ${prefix}_${name}: ${why}`) }

// Expected rows: [column, SQL expression, kind]; kinds: int real bool text source source_raw.
const K = 'k.'
const tables = {
  kernels: {
    from: 'kernels k ORDER BY k.id',
    cols: [['id', K + 'id', 'text'], ['name', K + 'name', 'text'], ['template_args', K + 'template_args', 'text'],
      ['status', K + 'status', 'text'], ['param_count', K + 'param_count', 'int'], ['params', K + 'params', 'text'],
      ['source_bytes', K + 'source_bytes', 'int'], ['source', K + 'dir', 'source'], ['source_raw', K + 'dir', 'source_raw'],
      ['occurrences', '(SELECT count(*) FROM kernel_occurrences x WHERE x.kernel_id = k.id)', 'int'],
      ['registers', '(SELECT registers FROM builds b WHERE b.kernel_id = k.id AND b.status = \'ok\')', 'int'],
      ['repairs', '(SELECT fixes FROM builds b WHERE b.kernel_id = k.id)', 'text'],
      ['sanitizer', '(SELECT group_concat(sanitizer) FROM probes p WHERE p.kernel_id = k.id)', 'text'],
      ['binding', K + 'binding', 'text']],
  },
  occurrences: {
    from: 'kernel_occurrences o JOIN sources s ON s.id = o.source_id LEFT JOIN repos r ON r.id = s.repo_id ORDER BY o.kernel_id, r.full_name, o.path, o.line',
    cols: [['kernel_id', 'o.kernel_id', 'text'], ['repository', 'r.full_name', 'text'], ['commit', 'r.commit_sha', 'text'],
      ['path', 'o.path', 'text'], ['line', 'o.line', 'int']],
  },
  repositories: {
    from: 'repos r ORDER BY r.full_name',
    cols: [['repository', 'r.full_name', 'text'], ['github_id', 'r.github_id', 'int'], ['license', 'r.license_spdx', 'text'],
      ['evidence', 'r.evidence', 'text'], ['fetched_at', 'r.fetched_at', 'text']],
  },
  measurements: {
    from: `measurements m, gpus g WHERE g.id = m.gpu_id AND NOT m.superseded${sinceM} ORDER BY m.kernel_id, m.gpu_id, m.width, m.height, m.block_x, m.block_y, m.block_z`,
    cols: [['kernel_id', 'm.kernel_id', 'text'], ['gpu', 'g.name', 'text'], ['width', 'm.width', 'int'], ['height', 'm.height', 'int'],
      ['block_x', 'm.block_x', 'int'], ['block_y', 'm.block_y', 'int'], ['block_z', 'm.block_z', 'int'], ['grid_x', 'm.grid_x', 'int'],
      ['status', 'm.status', 'text'], ['error', 'm.error', 'text'],
      ...['median', 'min', 'max', 'mean', 'stddev', 'mad', 'p10', 'p90'].map(s => [`${s}_ns`, `m.${s}_ns`, 'real']),
      ['samples', 'm.samples', 'int'], ['sm_clock_mhz_before', 'm.sm_clock_mhz_before', 'int'],
      ['clocks_locked', 'm.clocks_locked', 'bool'], ['l2_flush', 'm.l2_flush', 'bool'], ['binding', 'm.binding', 'text'],
      ['measured_at', 'm.measured_at', 'text']],
  },
  failures: {
    from: `failures f WHERE f.created_at >= '${since}' ORDER BY f.id`,
    cols: [['stage', 'f.stage', 'text'], ['subject', 'f.subject', 'text'], ['kernel_id', 'f.kernel_id', 'text'],
      ['class', 'f.class', 'text'], ['message', 'f.message', 'text']],
  },
  gpus: {
    from: 'gpus g ORDER BY g.name, g.uuid',
    cols: [['uuid', 'g.uuid', 'text'], ['model', 'g.name', 'text'], ['memory_bytes', 'g.memory_bytes', 'int'],
      ['sm_count', 'g.sm_count', 'int'], ['driver_version', 'g.driver_version', 'text'],
      ['measurements', `(SELECT count(*) FROM measurements m WHERE m.gpu_id = g.id AND m.superseded = 0${sinceM})`, 'int']],
  },
}

function expected(t) {
  const sel = t.cols.map(([n, e, kind], i) =>
    `${kind === 'real' ? `CASE WHEN ${e} IS NULL THEN NULL ELSE printf('%!.17g', ${e}) END` : `CAST(${e} AS TEXT)`} AS c${i}`).join(', ')
  const out = execFileSync('sqlite3', ['-json', db, `SELECT ${sel} FROM ${t.from}`], { maxBuffer: 1 << 28 }).toString()
  return out.trim() ? JSON.parse(out) : []
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
const toBytes = (v) => v instanceof Uint8Array ? v : v && v.bytes ? v.bytes : typeof v === 'string' ? new Uint8Array(Buffer.from(v, 'base64')) : v
const sameBytes = (a, b) => a && b && a.length === b.length && a.every((x, i) => x === b[i])

// Compare one value; returns null when equal, else a description.
function compare(kind, exp, act, fmt) {
  if (kind === 'source' || kind === 'source_raw') {
    const file = sourceFile(exp)
    if (kind === 'source') return (file === null ? act === null : act === repair(file)) ? null : `source differs (${String(act).slice(0, 40)})`
    const want = file && !validUtf8(file) ? file : null
    if (want === null) return act === null || act === undefined ? null : 'source_raw should be null'
    return sameBytes(toBytes(act), want) ? null : 'source_raw bytes differ'
  }
  if (exp === null || exp === undefined) return act === null || act === undefined ? null : `want null, got ${act}`
  if (act === null || act === undefined) return `want ${exp}, got null`
  if (kind === 'int') return String(act) === exp ? null : `want ${exp}, got ${act}`
  if (kind === 'real') return Number(exp) === Number(act) ? null : `want ${exp}, got ${act}`
  if (kind === 'bool') return (act === true || act === 'true') === (exp === '1') ? null : `want ${exp}, got ${act}`
  return act === exp ? null : `want ${JSON.stringify(exp).slice(0, 80)}, got ${JSON.stringify(act).slice(0, 80)}`
}

function check(reader, table, rows) {
  const t = tables[table]
  const exp = expected(t)
  if (rows.length !== exp.length) return notOk(`${reader}_${table}_values`, `${rows.length} rows, store has ${exp.length}`)
  for (let r = 0; r < exp.length; r++) {
    for (let c = 0; c < t.cols.length; c++) {
      const [name, , kind] = t.cols[c]
      const why = compare(kind, exp[r][`c${c}`], rows[r][name])
      if (why) return notOk(`${reader}_${table}_values`, `row ${r} column ${name}: ${why}`)
    }
  }
  ok(`${reader}_${table}_values_match_the_store`)
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

const names = Object.keys(tables).filter(t => existsSync(`${dir}/${t}.${format}`))
if (names.length === 0) notOk('files', `no ${format} files in ${dir}`)
if (format === 'parquet') {
  const duck = await (await DuckDBInstance.create(':memory:')).connect()
  for (const table of names) {
    const path = `${dir}/${table}.parquet`
    const file = await asyncBufferFromFile(path)
    const md = await parquetMetadataAsync(file)
    const kv = Object.fromEntries((md.key_value_metadata || []).map(x => [x.key, x.value]))
    if (kv['lscat.table'] === table && kv['lscat.schema_version'] && kv['lscat.export_time']) ok(`${table}_has_key_value_metadata`)
    else notOk(`${table}_has_key_value_metadata`, JSON.stringify(kv))
    const rows = await parquetReadObjects({ file, compressors, utf8: false })
    check('hyparquet', table, rows)
    // Statistics of every column chunk agree with its values.
    let bad = null, rowBase = 0
    for (const rg of md.row_groups) {
      const n = Number(rg.num_rows)
      for (const cc of rg.columns) {
        const name = cc.meta_data.path_in_schema[0]
        const vals = rows.slice(rowBase, rowBase + n).map(r => r[name])
        const st = cc.meta_data.statistics || {}
        const nulls = vals.filter(v => v === null || v === undefined).length
        if (Number(st.null_count) !== nulls) bad = `${name}: null_count ${st.null_count}, counted ${nulls}`
        const nn = vals.filter(v => v !== null && v !== undefined && typeof v !== 'object')
        if (nn.length && st.min_value !== undefined && typeof nn[0] !== 'string') {
          const mn = nn.reduce((a, b) => (b < a ? b : a)), mx = nn.reduce((a, b) => (b > a ? b : a))
          if (String(st.min_value) !== String(mn) || String(st.max_value) !== String(mx)) bad = `${name}: stats ${st.min_value}..${st.max_value}, values ${mn}..${mx}`
        }
      }
      rowBase += n
    }
    if (bad) notOk(`${table}_statistics_match_values`, bad); else ok(`${table}_statistics_match_values`)
    const res = await duck.runAndReadAll(`SELECT * FROM read_parquet('${path}')`)
    check('duckdb', table, res.getRowObjects())
  }
} else {
  for (const table of names) {
    let buf = readFileSync(`${dir}/${table}.${format}`)
    if (format.endsWith('.gz')) buf = gunzipSync(buf)
    const text = buf.toString('utf8')
    if (!validUtf8(new Uint8Array(buf))) notOk(`csv_${table}_is_utf8`, 'invalid UTF-8')
    let parsed
    try { parsed = parseCsv(text) } catch (e) { notOk(`csv_${table}_parses`, e.message); continue }
    const [header, ...body] = parsed
    check('csv', table, body.map(f => Object.fromEntries(header.map((h, i) => [h, f[i]]))))
  }
}
process.exit(failed ? 1 : 0)
