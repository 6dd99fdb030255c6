#!/usr/bin/env node
// A plain Node implementation of the tool-catalog digest (seed 000, sections 2-5), with no
// dependencies: JSON.parse, a small RFC 8785 serializer, and node:crypto's SHA-256.
//
// The second comparison point for `toolgate digest` (bench/compare.sh): the derivation written
// the obvious way in JavaScript, whose JSON.stringify already writes numbers in the ECMAScript
// form RFC 8785 §3.2.2.3 specifies and strings with its escaping, and whose default sort orders
// member names by UTF-16 code units (§3.2.3). Unlike toolgate it is not strict (duplicate
// members, large integers and lone surrogates pass); the generated catalogs have none. Prints the
// same JSON object as `toolgate digest --json`, so compare.sh checks that they agree.
//
// Usage: node bench/node_digest.js FILE
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');

const MEMBERS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'];
const LABEL = 'trace.mcp-tool-definition.v1';

function sha256(text) {
  return 'sha256:' + crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

// RFC 8785: primitives as JSON.stringify writes them, members sorted by UTF-16 code units.
function canonical(value) {
  if (value === null || typeof value !== 'object') {
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return '[' + value.map(canonical).join(',') + ']';
  }
  const names = Object.keys(value).sort();
  return '{' + names.map((name) => JSON.stringify(name) + ':' + canonical(value[name])).join(',') + '}';
}

function toolDigest(tool) {
  const restricted = {};
  for (const member of MEMBERS) {
    if (tool[member] !== undefined && tool[member] !== null) {
      restricted[member] = tool[member];
    }
  }
  return sha256(canonical({ profile: LABEL, tool: restricted }));
}

function toolKey(name) {
  if (name === undefined || name === null || name === '') {
    return 'tool:unnamed';
  }
  let body = '';
  for (const ch of name) {
    const code = ch.codePointAt(0);
    if (code >= 0x21 && code <= 0x7e && ch !== '%' && ch !== '=') {
      body += ch;
    } else {
      for (const byte of Buffer.from(ch, 'utf8')) {
        body += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
      }
    }
  }
  if (body.length > 128) {
    const hash = crypto.createHash('sha256').update(name, 'utf8').digest('hex');
    body = body.slice(0, 96) + '~' + hash.slice(0, 16);
  }
  return 'tool:' + body;
}

function fold(perKey) {
  const entries = new Map();
  for (const [key, digests] of perKey) {
    if (digests.length === 1) {
      entries.set(key, digests[0]);
    } else {
      entries.set(key, sha256(LABEL + '.duplicates\n' + [...digests].sort().join('\n')));
    }
  }
  // Keys are ASCII, so UTF-16 order is code point order.
  const keys = [...entries.keys()].sort();
  const lines = keys.slice(0, 500).map((key) => key + '=' + entries.get(key));
  if (keys.length > 500) {
    const rest = keys.slice(500).map((key) => key + '=' + entries.get(key)).join('\n');
    // "tools:overflow" sorts after every "tool:" key (':' < 's'), so it is the last line.
    lines.push('tools:overflow=' + sha256(LABEL + '.overflow\n' + rest));
  }
  return { keys, entries, catalog: sha256(lines.join('\n')) };
}

function main() {
  let doc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  if (!Array.isArray(doc)) {
    doc = (doc.result !== undefined ? doc.result : doc).tools;
  }
  const perKey = new Map();
  for (const tool of doc) {
    const key = toolKey(tool.name);
    if (!perKey.has(key)) {
      perKey.set(key, []);
    }
    perKey.get(key).push(toolDigest(tool));
  }
  const { keys, entries, catalog } = fold(perKey);
  const tools = keys.map((key) => JSON.stringify(key) + ':"' + entries.get(key) + '"').join(',');
  process.stdout.write(
    '{"label":' + JSON.stringify(LABEL) + ',"tools":{' + tools + '},"catalog":"' + catalog + '"}\n'
  );
}

main();
