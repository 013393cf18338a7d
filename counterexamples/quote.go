package counterexamples

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ShellQuote returns s as one word of a POSIX shell command line, so that
// a command pasted from a file's regenerate: or replay: line names the
// folder it was written in and runs nothing else: s itself when every
// character is plain (letters, digits, _ - . / : @ % + = , and printable
// non-ASCII), 's' (a quote in s closed, escaped, reopened) when it has
// other printable characters (a space, $, `, a quote), and bash's $'…'
// with escapes when it has a control character (a newline) or bytes that
// are not UTF-8, which also keeps the header on one line.
func ShellQuote(s string) string {
	plain, printable := s != "", utf8.ValidString(s)
	for _, r := range s {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@%+=,", r)):
		case r >= 0x80 && r != utf8.RuneError && unicode.IsPrint(r) && !unicode.IsSpace(r):
		case unicode.IsPrint(r) && r != utf8.RuneError || r == ' ':
			plain = false
		default:
			plain, printable = false, false
		}
	}
	switch {
	case plain:
		return s
	case printable:
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r) && r != ' ':
			for k := 0; k < n; k++ {
				fmt.Fprintf(&b, `\x%02x`, s[i+k])
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteString("'")
	return b.String()
}

// shellUnquote reads back a word written by ShellQuote; ok is false for
// anything else.
func shellUnquote(w string) (s string, ok bool) {
	if rest, isANSI := strings.CutPrefix(w, "$'"); isANSI {
		body, closed := strings.CutSuffix(rest, "'")
		if !closed {
			return "", false
		}
		var b strings.Builder
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c == '\'' {
				return "", false
			}
			if c != '\\' {
				b.WriteByte(c)
				continue
			}
			if i+1 >= len(body) {
				return "", false
			}
			i++
			switch body[i] {
			case '\\', '\'':
				b.WriteByte(body[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x':
				var v byte
				if i+2 >= len(body) || !hexByte(body[i+1:i+3], &v) {
					return "", false
				}
				b.WriteByte(v)
				i += 2
			default:
				return "", false
			}
		}
		return b.String(), true
	}
	if strings.HasPrefix(w, "'") {
		var b strings.Builder
		for len(w) > 0 {
			switch {
			case strings.HasPrefix(w, `\'`):
				b.WriteByte('\'')
				w = w[2:]
			case w[0] == '\'':
				end := strings.IndexByte(w[1:], '\'')
				if end < 0 {
					return "", false
				}
				b.WriteString(w[1 : 1+end])
				w = w[end+2:]
			default:
				return "", false
			}
		}
		return b.String(), true
	}
	return w, ShellQuote(w) == w
}

func hexByte(h string, v *byte) bool {
	var n byte
	for i := 0; i < 2; i++ {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | (c - '0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | (c - 'a' + 10)
		default:
			return false
		}
	}
	*v = n
	return true
}
