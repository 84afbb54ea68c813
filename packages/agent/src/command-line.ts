/**
 * Splits a command line into argv the way a POSIX shell would for plain words and quotes,
 * without running a shell: no variables, globs, pipes or redirections. `'…'` keeps
 * everything literally, `"…"` allows `\"`, `\\`, `\$` and `` \` `` escapes, and a backslash
 * outside quotes escapes the next character. Throws on an unterminated quote.
 */
export function splitCommandLine(line: string): string[] {
  const argv: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (inWord) argv.push(word);
      word = '';
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated single quote');
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < line.length) {
        const d = line[i]!;
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) {
          word += line[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
      if (!closed) throw new Error('unterminated double quote');
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error('trailing backslash');
      word += line[i + 1];
      inWord = true;
      i += 2;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) argv.push(word);
  return argv;
}
