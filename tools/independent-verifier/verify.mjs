#!/usr/bin/env node
// Independent verifier for the conformance corpus in corpus/.
//
// Written from the text of seed 000 ("Tool-catalog observed digest"), not from the Rust crates, so
// that the promise of its sections 7, 8 and 11 -- "a second implementation can recompute every value
// from the same bytes" -- is tested by a second implementation. Zero dependencies: Node 18 or later,
// node:crypto for SHA-256, node:fs and node:path to read the corpus.
//
// Usage: node tools/independent-verifier/verify.mjs [CORPUS_DIR]
//   CORPUS_DIR defaults to ../../corpus relative to this file.
// Prints one line per check ("pass ..." or "FAIL ...") and ends with "N passed, M failed".
// Exit status: 0 when every check passed, 1 when any failed.
//
// Strict reading. JSON.parse keeps the last of two duplicate members and silently rounds integers
// beyond 2^53, so two parties could hash different values from the same bytes. This file therefore
// carries its own small JSON reader, which refuses (and never hashes): invalid UTF-8, a byte order
// mark, a duplicate member name at any depth, an integer literal outside +-(2^53-1), a number that
// overflows a double, a lone surrogate escape, nesting deeper than MAX_DEPTH, and trailing content.
// Every other number becomes the nearest double (Number() rounds correctly) and is written back in
// ECMAScript form, which is what RFC 8785 section 3.2.2.3 prescribes.

import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The label seed 000 section 3 fixes for this derivation; carried literally in every preimage. */
export const TRACE_LABEL = 'trace.mcp-tool-definition.v1';
/** Seed 000 section 3, step 1: the members a per-tool digest covers. */
export const HASHED_MEMBERS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'];
/** Seed 000 section 5: entries kept before the overflow rule applies. */
export const FOLD_LIMIT = 500;
/** Catalogs with more tools than this get one line for all their matching per-tool digests. */
const PER_TOOL_LINES = 50;
/** Deepest nesting the reader accepts; deeper input is refused, never a stack overflow. */
export const MAX_DEPTH = 128;

/** An input the verifier refuses to hash, or a corpus it cannot read. */
export class VerifierError extends Error {}

// ---------------------------------------------------------------------------------------------
// Strict JSON reader. Objects become Map (insertion order, and no "__proto__" surprises).

/** JSON Pointer (RFC 6901) of a path of member names and array indexes. */
function pointer(path) {
  return path.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('') || '(root)';
}

/** True when a string holds a lone surrogate (not representable in UTF-8, refused by RFC 8785). */
function hasLoneSurrogate(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
      return true;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

/**
 * Parse bytes as strict JSON (RFC 8259 plus the refusals listed at the top of this file).
 * `what` names the input in error messages.
 */
export function parseStrictJson(bytes, what) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new VerifierError(`${what}: not valid UTF-8; re-save the file as UTF-8`);
  }
  let i = 0;
  const fail = (why, path) => {
    throw new VerifierError(`${what}: ${why} at ${pointer(path)} (character offset ${i}); refusing to hash it`);
  };
  const skipWhitespace = () => {
    while (i < text.length) {
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
      else break;
    }
  };
  const numberPattern = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

  function parseString(path) {
    // text[i] is the opening quote.
    i++;
    const parts = [];
    let start = i;
    for (;;) {
      if (i >= text.length) fail('unterminated string', path);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        parts.push(text.slice(start, i));
        i++;
        break;
      }
      if (c < 0x20) fail('unescaped control character in a string', path);
      if (c !== 0x5c) {
        i++;
        continue;
      }
      parts.push(text.slice(start, i));
      const e = text[i + 1];
      const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (e in simple) {
        parts.push(simple[e]);
        i += 2;
      } else if (e === 'u') {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) fail('bad \\u escape', path);
        parts.push(String.fromCharCode(parseInt(hex, 16)));
        i += 6;
      } else {
        fail('bad escape', path);
      }
      start = i;
    }
    const s = parts.join('');
    if (hasLoneSurrogate(s)) fail('lone surrogate in a string', path);
    return s;
  }

  function parseValue(path, depth) {
    skipWhitespace();
    if (i >= text.length) fail('unexpected end of input', path);
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth >= MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`, path);
    }
    if (c === '{') {
      i++;
      const members = new Map();
      skipWhitespace();
      if (text[i] === '}') {
        i++;
        return members;
      }
      for (;;) {
        skipWhitespace();
        if (text[i] !== '"') fail('expected a member name', path);
        const name = parseString(path);
        if (members.has(name)) fail(`duplicate member name ${JSON.stringify(name)}`, path);
        skipWhitespace();
        if (text[i] !== ':') fail('expected ":"', path);
        i++;
        members.set(name, parseValue([...path, name], depth + 1));
        skipWhitespace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return members;
        }
        fail('expected "," or "}"', path);
      }
    }
    if (c === '[') {
      i++;
      const items = [];
      skipWhitespace();
      if (text[i] === ']') {
        i++;
        return items;
      }
      for (;;) {
        items.push(parseValue([...path, items.length], depth + 1));
        skipWhitespace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return items;
        }
        fail('expected "," or "]"', path);
      }
    }
    if (c === '"') return parseString(path);
    for (const [word, value] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return value;
      }
    }
    numberPattern.lastIndex = i;
    const m = numberPattern.exec(text);
    if (!m) fail('unexpected character', path);
    const value = Number(m[0]);
    if (!Number.isFinite(value)) fail(`number ${m[0]} overflows an IEEE 754 double`, path);
    const isIntegerLiteral = m[1] === undefined && m[2] === undefined;
    if (isIntegerLiteral && Math.abs(value) > Number.MAX_SAFE_INTEGER) {
      fail(`integer ${m[0]} is outside +-(2^53-1) and cannot be represented exactly`, path);
    }
    i += m[0].length;
    return value;
  }

  const value = parseValue([], 0);
  skipWhitespace();
  if (i !== text.length) fail('trailing content after the JSON value', []);
  return value;
}

// ---------------------------------------------------------------------------------------------
// RFC 8785 (JCS).

/** The RFC 8785 canonical text of a value produced by parseStrictJson. */
export function canonicalize(value) {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new VerifierError('RFC 8785 cannot canonicalize a non-finite number');
    // RFC 8785 section 3.2.2.3: ECMAScript Number::toString, which String() is (and -0 gives "0").
    return String(value);
  }
  if (typeof value === 'string') {
    // RFC 8785 section 3.2.2.2 is ECMAScript's QuoteJSONString, which JSON.stringify applies to a
    // string: \" \\ \b \f \n \r \t, other controls as \u00xx (lowercase), everything else literal.
    // Lone surrogates never get here (the reader refuses them).
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return '[' + value.map(canonicalize).join(',') + ']';
  if (value instanceof Map) {
    // RFC 8785 section 3.2.3: members sorted by the UTF-16 code units of their names, which is
    // what Array.prototype.sort without a comparator does for strings.
    const names = [...value.keys()].sort();
    return '{' + names.map((n) => JSON.stringify(n) + ':' + canonicalize(value.get(n))).join(',') + '}';
  }
  throw new VerifierError(`cannot canonicalize a value of type ${typeof value}`);
}

function sha256Hex(bytesOrString) {
  return createHash('sha256').update(typeof bytesOrString === 'string' ? Buffer.from(bytesOrString, 'utf8') : bytesOrString).digest('hex');
}

/** `sha256:` + 64 lowercase hex of the SHA-256 of the UTF-8 bytes of a string (or of bytes). */
export function digestOf(bytesOrString) {
  return 'sha256:' + sha256Hex(bytesOrString);
}

// ---------------------------------------------------------------------------------------------
// Seed 000 section 3: the per-tool digest.

/** Per-tool digest of one tool definition (a Map), under `label`. */
export function toolDigest(definition, label = TRACE_LABEL) {
  if (!(definition instanceof Map)) throw new VerifierError('a tool definition must be a JSON object');
  const restricted = new Map();
  for (const member of HASHED_MEMBERS) {
    // Absent and null are the same and omitted; "", {}, false and every other value are kept.
    if (definition.has(member) && definition.get(member) !== null) restricted.set(member, definition.get(member));
  }
  const wrapped = new Map([
    ['profile', label],
    ['tool', restricted],
  ]);
  return digestOf(canonicalize(wrapped));
}

// ---------------------------------------------------------------------------------------------
// Seed 000 section 4: the key.

/** The key of a tool name: `tool:` + encoded body (section 4, rules 1 to 4). */
export function toolKey(name) {
  // Rule 1: no name (absent or null) or an empty one is keyed as "unnamed".
  if (name === undefined || name === null || name === '') return 'tool:unnamed';
  if (typeof name !== 'string') throw new VerifierError(`a tool name must be a string, found ${canonicalize(name)}`);
  // Rule 2: everything outside 0x21..0x7E, and % and =, becomes its UTF-8 bytes as %XX (uppercase).
  let body = '';
  for (const ch of name) {
    const cp = ch.codePointAt(0);
    if (cp >= 0x21 && cp <= 0x7e && ch !== '%' && ch !== '=') {
      body += ch;
    } else {
      for (const byte of Buffer.from(ch, 'utf8')) body += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
    }
  }
  // Rule 3: a body longer than 128 characters is cut to its first 96 characters (the cut may fall
  // inside a %XX triplet and is kept as it falls), then ~ and 16 hex of SHA-256 of the raw name.
  if (body.length > 128) body = body.slice(0, 96) + '~' + sha256Hex(Buffer.from(name, 'utf8')).slice(0, 16);
  // Rule 4.
  return 'tool:' + body;
}

// ---------------------------------------------------------------------------------------------
// Seed 000 section 5: the catalog digest.

/** The tools array of a tools/list document: a bare array, {"tools": [...]}, or a JSON-RPC response. */
export function toolsOf(document) {
  if (Array.isArray(document)) return document;
  if (document instanceof Map) {
    if (Array.isArray(document.get('tools'))) return document.get('tools');
    const result = document.get('result');
    if (result instanceof Map && Array.isArray(result.get('tools'))) return result.get('tools');
  }
  throw new VerifierError('not a tools/list document: expected an array, {"tools": [...]} or {"result": {"tools": [...]}}');
}

/** The per-tool entries of a tools array: [key, digest] in array order. */
export function perToolEntries(tools, label = TRACE_LABEL) {
  return tools.map((tool, index) => {
    if (!(tool instanceof Map)) throw new VerifierError(`tool ${index} is not a JSON object`);
    return [toolKey(tool.get('name')), toolDigest(tool, label)];
  });
}

/**
 * The fold: per-tool entries -> { perKey: Map key -> digest after the duplicate rule and before
 * the overflow rule, duplicateKeys, overflow: the tools:overflow digest or null, entries: the
 * folded Map after both rules, lines: the key=digest lines, digest: the catalog digest }.
 */
export function fold(entries, label = TRACE_LABEL) {
  const byKey = new Map();
  for (const [key, digest] of entries) {
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key).push(digest);
  }
  // Duplicate rule first: one entry whose digest hashes "<label>.duplicates\n" + sorted digests.
  const merged = [];
  const duplicateKeys = [];
  for (const [key, digests] of byKey) {
    if (digests.length === 1) {
      merged.push([key, digests[0]]);
    } else {
      // Every definition counts, so a definition given twice contributes its digest twice.
      duplicateKeys.push(key);
      merged.push([key, digestOf(`${label}.duplicates\n` + [...digests].sort().join('\n'))]);
    }
  }
  // Keys are printable ASCII, so code-unit order is code-point order and byte order.
  merged.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let kept = merged;
  let overflow = null;
  if (merged.length > FOLD_LIMIT) {
    // Overflow rule: the first 500 keys stay; the rest fold under tools:overflow.
    const rest = merged.slice(FOLD_LIMIT).map(([k, d]) => `${k}=${d}`);
    overflow = digestOf(`${label}.overflow\n` + rest.join('\n'));
    kept = [...merged.slice(0, FOLD_LIMIT), ['tools:overflow', overflow]];
    kept.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }
  const lines = kept.map(([k, d]) => `${k}=${d}`);
  return {
    perKey: new Map(merged),
    duplicateKeys: duplicateKeys.sort(),
    overflow,
    entries: new Map(kept),
    lines,
    digest: digestOf(lines.join('\n')),
  };
}

// ---------------------------------------------------------------------------------------------
// Seed 000 sections 6 and 8: evaluating a requirement set against the presented components.

/**
 * Outcome of a requirement set against presented components. Seed 000 section 6 fixes only the
 * mismatch (`component_observation_mismatch`); the other failure names are this corpus's own.
 */
export function evaluate(requirements, presented) {
  const byId = new Map();
  for (const component of presented) {
    const id = component.get('component_id');
    if (byId.has(id)) return { outcome: 'duplicate_component', component_id: id };
    byId.set(id, component);
  }
  for (const required of requirements) {
    const id = required.get('component_id');
    const component = byId.get(id);
    if (component === undefined) return { outcome: 'component_missing', component_id: id };
    if (component.get('type') !== required.get('type')) return { outcome: 'component_type_mismatch', component_id: id };
    const pin = required.get('expected_observed_digest');
    if (pin !== undefined && pin !== null && component.get('observed_digest') !== pin) {
      return { outcome: 'component_observation_mismatch', component_id: id };
    }
  }
  return { outcome: 'valid', composite_status: 'affirming' };
}

// ---------------------------------------------------------------------------------------------
// The corpus checks.

class Report {
  constructor(out) {
    this.out = out;
    this.passed = 0;
    this.failed = 0;
  }
  pass(what, detail) {
    this.passed++;
    this.out(`pass ${what}: ${detail}`);
  }
  fail(what, detail) {
    this.failed++;
    this.out(`FAIL ${what}: ${detail}`);
  }
  /** Compare a recorded value with a recomputed one. */
  same(what, recorded, recomputed) {
    if (recorded === recomputed) this.pass(what, String(recomputed));
    else this.fail(what, `corpus has ${JSON.stringify(recorded)}, recomputed ${JSON.stringify(recomputed)}`);
  }
  /** Run `body`; a VerifierError (or any error) becomes one failed check named `what`. */
  guard(what, body) {
    try {
      return body();
    } catch (e) {
      this.fail(what, e instanceof Error ? e.message : String(e));
      return undefined;
    }
  }
}

function readJson(corpus, relative) {
  let bytes;
  try {
    bytes = readFileSync(join(corpus, relative));
  } catch (e) {
    throw new VerifierError(`${relative}: cannot read (${e.code ?? e.message})`);
  }
  return { bytes, value: parseStrictJson(bytes, relative) };
}

function member(map, name, where) {
  if (!(map instanceof Map) || !map.has(name)) throw new VerifierError(`${where}: member "${name}" is missing`);
  return map.get(name);
}

/** Run every check on the corpus at `corpus`; returns the report. `out` receives each line. */
export function verifyCorpus(corpus, out = console.log) {
  const report = new Report(out);
  const manifest = report.guard('digests.json', () => readJson(corpus, 'digests.json').value);
  if (manifest === undefined) return report;

  report.same('digests.json label', report.guard('digests.json label', () => member(manifest, 'label', 'digests.json')), TRACE_LABEL);
  const label = TRACE_LABEL;

  // Per-tool digests, keys and catalog digests (seed sections 3 to 5, 7).
  const catalogs = report.guard('digests.json catalogs', () => member(manifest, 'catalogs', 'digests.json')) ?? new Map();
  const recomputed = new Map(); // catalog name -> { tools, folded }
  for (const [name, entry] of catalogs) {
    const where = `catalogs.${name}`;
    report.guard(where, () => {
      const file = member(entry, 'file', where);
      const { bytes, value } = readJson(corpus, file);
      report.same(`${where}.bytes_sha256 (${file})`, member(entry, 'bytes_sha256', where), sha256Hex(bytes));
      const tools = toolsOf(value);
      const entries = perToolEntries(tools, label);
      const folded = fold(entries, label);
      // The recorded map is per key after the duplicate rule and before the overflow rule.
      const recordedTools = member(entry, 'tools', where);
      const recomputedTools = folded.perKey;
      // One line per tool, except for a large constructed catalog, where the matching tools
      // share one line and each mismatch still gets its own.
      const oneLineEach = recordedTools.size <= PER_TOOL_LINES;
      let matching = 0;
      for (const [key, digest] of recordedTools) {
        const what = `${where}.tools[${JSON.stringify(key)}]`;
        const recomputedDigest = recomputedTools.get(key) ?? '(no tool with this key)';
        if (oneLineEach || digest !== recomputedDigest) report.same(what, digest, recomputedDigest);
        else matching++;
      }
      if (!oneLineEach) report.pass(`${where}.tools`, `${matching} of ${recordedTools.size} per-tool digests recompute`);
      for (const key of recomputedTools.keys()) {
        if (!recordedTools.has(key)) report.fail(`${where}.tools`, `${file} has a tool keyed ${key} that digests.json does not list`);
      }
      report.same(`${where}.duplicate_keys`, canonicalize(entry.get('duplicate_keys') ?? []), canonicalize(folded.duplicateKeys));
      report.same(`${where}.overflow_digest`, entry.get('overflow_digest') ?? null, folded.overflow);
      report.same(`${where}.catalog_digest`, member(entry, 'catalog_digest', where), folded.digest);
      recomputed.set(name, { tools, folded, entry });
    });
  }

  // The drifted catalog is the served one with one sentence appended to one description (section 7).
  for (const [name, { tools, entry }] of recomputed) {
    if (!entry.has('constructed_from')) continue;
    const where = `catalogs.${name}.constructed_from`;
    report.guard(where, () => {
      const how = member(entry, 'constructed_from', `catalogs.${name}`);
      const base = recomputed.get(member(how, 'catalog', where));
      if (base === undefined) throw new VerifierError(`${where}: names a catalog that was not recomputed`);
      const toolName = member(how, 'tool', where);
      const field = member(how, 'member', where);
      const appended = member(how, 'appended', where);
      const reverted = tools.map((t) => {
        if (t.get('name') !== toolName) return t;
        const copy = new Map(t);
        const drifted = copy.get(field);
        if (typeof drifted !== 'string' || !drifted.endsWith(appended)) throw new VerifierError(`${where}: ${toolName}.${field} does not end with the appended text`);
        copy.set(field, drifted.slice(0, drifted.length - appended.length));
        return copy;
      });
      if (canonicalize(reverted) === canonicalize(base.tools)) report.pass(where, `equal to ${how.get('catalog')} once ${JSON.stringify(appended)} is removed from ${toolName}.${field}`);
      else report.fail(where, `removing ${JSON.stringify(appended)} from ${toolName}.${field} does not give ${how.get('catalog')}`);
    });
  }

  // Section 4 rules 2 and 3 on names the pinned catalogs do not exercise.
  const keyPairs = report.guard('digests.json keys', () => member(manifest, 'keys', 'digests.json')) ?? [];
  keyPairs.forEach((pair, index) => {
    const where = `keys[${index}]`;
    report.guard(where, () => {
      const name = member(pair, 'name', where);
      report.same(`${where} (${member(pair, 'case', where)})`, member(pair, 'key', where), toolKey(name));
    });
  });

  // The vectors (sections 6 and 8).
  const vectors = report.guard('digests.json vectors', () => member(manifest, 'vectors', 'digests.json')) ?? new Map();
  const listed = new Set();
  for (const [id, roles] of vectors) {
    const where = `vectors.${id}`;
    report.guard(where, () => {
      const file = member(roles, 'file', where);
      listed.add(file);
      const vector = readJson(corpus, file).value;
      report.same(`${where} id`, member(vector, 'id', file), id);
      const pinnedName = member(roles, 'pinned', where);
      const presentedName = member(roles, 'presented', where);
      const catalogsOfVector = member(vector, 'catalogs', file);
      report.same(`${file} catalogs.pinned`, member(catalogsOfVector, 'pinned', file), pinnedName);
      report.same(`${file} catalogs.presented`, member(catalogsOfVector, 'presented', file), presentedName);
      const pinned = recomputed.get(pinnedName);
      const shown = recomputed.get(presentedName);
      if (pinned === undefined || shown === undefined) throw new VerifierError(`${where}: names a catalog that was not recomputed`);

      const requirements = member(member(vector, 'requirements', file), 'components', `${file} requirements`);
      const presented = member(member(vector, 'presented', file), 'components', `${file} presented`);
      const catalogRequirement = requirements.find((c) => c.get('type') === 'tool-catalog');
      const catalogComponent = presented.find((c) => c.get('type') === 'tool-catalog');
      if (!catalogRequirement || !catalogComponent) throw new VerifierError(`${file}: no tool-catalog requirement or component`);
      report.same(`${file} requirements tools.catalog expected_observed_digest (catalog ${pinnedName})`, catalogRequirement.get('expected_observed_digest'), pinned.folded.digest);
      report.same(`${file} presented tools.catalog observed_digest (catalog ${presentedName})`, catalogComponent.get('observed_digest'), shown.folded.digest);

      const outcome = evaluate(requirements, presented);
      const expected = member(vector, 'expected', file);
      report.same(`${file} expected.outcome`, member(expected, 'outcome', `${file} expected`), outcome.outcome);
      report.same(`${file} expected.composite_status`, expected.get('composite_status') ?? null, outcome.composite_status ?? null);
      report.same(`${file} expected.component_id`, expected.get('component_id') ?? null, outcome.component_id ?? null);
      report.same(`${where} outcome in digests.json`, member(roles, 'outcome', where), outcome.outcome);
    });
  }
  report.guard('vectors/', () => {
    for (const file of readdirSync(join(corpus, 'vectors')).filter((f) => f.endsWith('.json')).sort()) {
      if (!listed.has(`vectors/${file}`)) report.fail('vectors/', `vectors/${file} is not listed in digests.json`);
    }
  });

  // The material seed sections 7 and 8 call for is all there (a truncated corpus must not pass).
  const requiredCatalogs = ['deepwiki', 'deepwiki-drifted', 'everything'];
  const requiredVectors = ['COMP-MCP-004', 'COMP-MCP-005', 'COMP-MCP-006'];
  const absent = [
    ...requiredCatalogs.filter((name) => !recomputed.has(name)).map((name) => `catalog ${name}`),
    ...requiredVectors.filter((id) => !vectors.has(id)).map((id) => `vector ${id}`),
  ];
  if (keyPairs.length < 13) absent.push(`name-to-key pairs (${keyPairs.length} of at least 13)`);
  if (absent.length === 0) report.pass('corpus completeness', `${requiredCatalogs.join(', ')}; ${requiredVectors.join(', ')}; ${keyPairs.length} key pairs`);
  else report.fail('corpus completeness', `missing or not recomputed: ${absent.join(', ')}`);

  // Section 8 properties that the pinned material must show.
  const served = recomputed.get('deepwiki');
  const drifted = recomputed.get('deepwiki-drifted');
  const wrong = recomputed.get('everything');
  if (served && drifted) {
    const changed = served.folded.lines.filter((line) => !drifted.folded.lines.includes(line));
    const sameKeys = canonicalize([...served.folded.entries.keys()]) === canonicalize([...drifted.folded.entries.keys()]);
    if (sameKeys && changed.length === 1) report.pass('section 8 drift changes exactly one fold line', changed[0].split('=')[0]);
    else report.fail('section 8 drift changes exactly one fold line', `${changed.length} lines differ, same keys: ${sameKeys}`);
  }
  if (served && wrong) {
    const shared = [...wrong.folded.entries.keys()].filter((k) => served.folded.entries.has(k));
    if (shared.length === 0) report.pass('section 8 wrong-subject catalog shares no key with the pinned one', `${wrong.folded.entries.size} keys, none shared`);
    else report.fail('section 8 wrong-subject catalog shares no key with the pinned one', `shared: ${shared.join(', ')}`);
  }
  return report;
}

function main(argv) {
  const here = dirname(fileURLToPath(import.meta.url));
  const corpus = resolve(argv[0] ?? join(here, '..', '..', 'corpus'));
  console.log(`independent verifier: corpus ${corpus}`);
  const report = verifyCorpus(corpus);
  console.log(`${report.passed} passed, ${report.failed} failed`);
  return report.failed === 0 ? 0 : 1;
}

/** Whether this file is the program node was asked to run (and not merely imported). */
function isMain() {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) process.exitCode = main(process.argv.slice(2));
