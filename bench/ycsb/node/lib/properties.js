'use strict';
// Java .properties files and the YCSB client's command line: -threads n,
// -target n, -load, -t, -db name, -P file (several, in order), -p
// name=value (over the files), -s, -l label, as site.ycsb.Client reads it.

const fs = require('node:fs');

class UsageError extends Error {
  constructor(message) { super(message); this.name = 'UsageError'; }
}

const ESCAPES = { t: '\t', n: '\n', r: '\r', f: '\f' };

function unescape(s) {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== '\\') { out += c; continue; }
    const d = s[++i] ?? '';
    if (d === 'u') {
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 5), 16));
      i += 4;
    } else {
      out += ESCAPES[d] ?? d;
    }
  }
  return out;
}

/** Logical lines: continuations (odd number of trailing backslashes)
 *  joined, comments and blank lines dropped. */
function* logicalLines(text) {
  let pending = '';
  for (const raw of text.split(/\r?\n|\r/)) {
    const line = raw.replace(/^[ \t\f]+/, '');
    if (!pending && (line === '' || line[0] === '#' || line[0] === '!')) continue;
    const trailing = line.length - line.replace(/\\+$/, '').length;
    if (trailing % 2) { pending += line.slice(0, -1); continue; }
    yield pending + line;
    pending = '';
  }
  if (pending) yield pending;
}

/** The name -> value pairs of a Java properties file. */
function parseProperties(text) {
  const props = {};
  for (const line of logicalLines(text)) {
    let i = 0;
    while (i < line.length && !'=: \t\f'.includes(line[i])) i += line[i] === '\\' ? 2 : 1;
    let rest = line.slice(i).replace(/^[ \t\f]+/, '');
    if (rest[0] === '=' || rest[0] === ':') rest = rest.slice(1).replace(/^[ \t\f]+/, '');
    props[unescape(line.slice(0, i))] = unescape(rest);
  }
  return props;
}

function loadProperties(path) {
  let text;
  try {
    text = fs.readFileSync(path, 'latin1');
  } catch (e) {
    throw new UsageError(`unable to open the properties file ${path}: ${e.message}`);
  }
  return parseProperties(text);
}

/** The properties a command line asks for (files first, -p and options
 *  over them). Throws UsageError naming the bad argument. */
function parseCommandLine(args) {
  const files = {};
  const props = {};
  const value = (i, opt) => {
    if (i >= args.length) throw new UsageError(`missing argument value for ${opt}`);
    return args[i];
  };
  const intValue = (i, opt) => {
    const v = value(i, opt);
    if (!/^[+-]?\d+$/.test(v)) throw new UsageError(`${opt} expects an integer, not '${v}'`);
    return String(parseInt(v, 10));
  };
  for (let i = 0; i < args.length;) {
    const a = args[i];
    switch (a) {
      case '-threads': props.threadcount = intValue(i + 1, a); i += 2; break;
      case '-target': props.target = intValue(i + 1, a); i += 2; break;
      case '-load': props.dotransactions = 'false'; i += 1; break;
      case '-t': props.dotransactions = 'true'; i += 1; break;
      case '-s': props.status = 'true'; i += 1; break;
      case '-db': props.db = value(i + 1, a); i += 2; break;
      case '-l': props.label = value(i + 1, a); i += 2; break;
      case '-P': Object.assign(files, loadProperties(value(i + 1, a))); i += 2; break;
      case '-p': {
        const pair = value(i + 1, a);
        const eq = pair.indexOf('=');
        if (eq < 0) {
          throw new UsageError(`-p expects name=value (e.g. -p operationcount=99999), not '${pair}'`);
        }
        props[pair.slice(0, eq)] = pair.slice(eq + 1);
        i += 2;
        break;
      }
      default: throw new UsageError(`unknown option '${a}'`);
    }
  }
  Object.assign(files, props);
  if (!('workload' in files)) throw new UsageError('missing property: workload (give a workload file with -P)');
  return files;
}

module.exports = { UsageError, parseProperties, loadProperties, parseCommandLine };
