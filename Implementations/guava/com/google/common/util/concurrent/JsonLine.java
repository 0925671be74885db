package com.google.common.util.concurrent;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON of one protocol line (Spec/protocol.md), read and written by hand: the shim uses no
 * library but the JDK and the unmodified Guava jar.
 *
 * <p>Values are {@code Map<String, Object>} (members in order), {@code List<Object>}, {@code
 * String}, {@code Long} (every integer that fits 64 bits: the protocol's integers are exact 64-bit
 * values and are never read as floating point), {@code BigInteger} (a larger integer), {@code
 * Double} (a number with a fraction or an exponent), {@code Boolean} and {@code null}.
 */
final class JsonLine {
  /** The one-letter escapes after a backslash, and the characters they stand for. */
  private static final String ESCAPES = "\"\\/bfnrt";
  private static final String ESCAPED = "\"\\/\b\f\n\r\t";

  private final String text;
  private int at;

  private JsonLine(String text) {
    this.text = text;
  }

  /** The value of {@code text}, which must hold exactly one JSON value. */
  static Object parse(String text) {
    JsonLine reader = new JsonLine(text);
    reader.skipSpace();
    Object value = reader.value();
    reader.skipSpace();
    if (reader.at != text.length()) throw reader.error("text after the value");
    return value;
  }

  private IllegalArgumentException error(String problem) {
    return new IllegalArgumentException("bad JSON at column " + (at + 1) + ": " + problem);
  }

  private void skipSpace() {
    while (at < text.length()) {
      char c = text.charAt(at);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
      at += 1;
    }
  }

  private char next() {
    if (at >= text.length()) throw error("unexpected end");
    return text.charAt(at++);
  }

  private void expect(String word) {
    if (!text.startsWith(word, at)) throw error("expected " + word);
    at += word.length();
  }

  private Object value() {
    if (at >= text.length()) throw error("unexpected end");
    char c = text.charAt(at);
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      case 't':
        expect("true");
        return Boolean.TRUE;
      case 'f':
        expect("false");
        return Boolean.FALSE;
      case 'n':
        expect("null");
        return null;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        throw error("unexpected '" + c + "'");
    }
  }

  /** Skips white space, then consumes {@code c} if it comes next. */
  private boolean skipTo(char c) {
    skipSpace();
    if (at >= text.length() || text.charAt(at) != c) return false;
    at += 1;
    return true;
  }

  private Map<String, Object> object() {
    Map<String, Object> members = new LinkedHashMap<>();
    at += 1; // {
    if (skipTo('}')) return members;
    while (true) {
      skipSpace();
      if (at >= text.length() || text.charAt(at) != '"') throw error("expected a member name");
      String name = string();
      if (!skipTo(':')) throw error("expected ':'");
      skipSpace();
      members.put(name, value());
      if (skipTo('}')) return members;
      if (!skipTo(',')) throw error("expected ',' or '}'");
    }
  }

  private List<Object> array() {
    List<Object> items = new ArrayList<>();
    at += 1; // [
    if (skipTo(']')) return items;
    while (true) {
      skipSpace();
      items.add(value());
      if (skipTo(']')) return items;
      if (!skipTo(',')) throw error("expected ',' or ']'");
    }
  }

  private String string() {
    at += 1; // "
    StringBuilder out = new StringBuilder();
    while (true) {
      char c = next();
      if (c == '"') return out.toString();
      if (c < 0x20) throw error("control character in a string");
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char escape = next();
      int simple = ESCAPES.indexOf(escape);
      if (simple >= 0) {
        out.append(ESCAPED.charAt(simple));
      } else if (escape == 'u' && at + 4 <= text.length()) {
        try {
          out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
        } catch (NumberFormatException notHex) {
          throw error("bad \\u escape");
        }
        at += 4;
      } else {
        throw error("bad escape \\" + escape);
      }
    }
  }

  private Object number() {
    int start = at;
    if (text.charAt(at) == '-') at += 1;
    int digits = at;
    while (at < text.length() && Character.isDigit(text.charAt(at))) at += 1;
    if (at == digits) throw error("expected a digit");
    if (text.charAt(digits) == '0' && at - digits > 1) throw error("leading zero");
    boolean integer = true;
    if (at < text.length() && text.charAt(at) == '.') {
      integer = false;
      at += 1;
      int fraction = at;
      while (at < text.length() && Character.isDigit(text.charAt(at))) at += 1;
      if (at == fraction) throw error("expected a digit after '.'");
    }
    if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
      integer = false;
      at += 1;
      if (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) at += 1;
      int exponent = at;
      while (at < text.length() && Character.isDigit(text.charAt(at))) at += 1;
      if (at == exponent) throw error("expected a digit in the exponent");
    }
    String literal = text.substring(start, at);
    if (!integer) return Double.valueOf(literal);
    BigInteger value = new BigInteger(literal);
    return value.bitLength() < 64 ? (Object) value.longValueExact() : value;
  }

  /** {@code value} as one line of JSON (no newline), members in their map's order. */
  static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(Object value, StringBuilder out) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String) {
      writeString((String) value, out);
    } else if (value instanceof Long || value instanceof Integer || value instanceof BigInteger) {
      out.append(value);
    } else if (value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> member : ((Map<?, ?>) value).entrySet()) {
        if (!first) out.append(',');
        first = false;
        writeString((String) member.getKey(), out);
        out.append(':');
        write(member.getValue(), out);
      }
      out.append('}');
    } else if (value instanceof List) {
      out.append('[');
      boolean first = true;
      for (Object item : (List<?>) value) {
        if (!first) out.append(',');
        first = false;
        write(item, out);
      }
      out.append(']');
    } else {
      throw new IllegalArgumentException("cannot write a " + value.getClass().getName());
    }
  }

  private static void writeString(String value, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      int simple = ESCAPED.indexOf(c);
      if (simple >= 0 && c != '/') {
        out.append('\\').append(ESCAPES.charAt(simple));
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    out.append('"');
  }

  /** An object built member by member: {@code JsonLine.object("type", "hello", "protocol", 2L)}. */
  static Map<String, Object> object(Object... namesAndValues) {
    Map<String, Object> members = new LinkedHashMap<>();
    for (int i = 0; i + 1 < namesAndValues.length; i += 2) {
      members.put((String) namesAndValues[i], namesAndValues[i + 1]);
    }
    return members;
  }
}
