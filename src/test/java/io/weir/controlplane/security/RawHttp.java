package io.weir.controlplane.security;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * HTTP/1.1 over a plain socket, for requests a well-behaved client refuses to send: header values
 * with trailing blanks, raw UTF-8 bytes, several Authorization headers.
 */
final class RawHttp {

    /** A response: status, raw header block and body, read until the server closes. */
    record Response(int status, String headers, String body) {

        String header(String name) {
            for (String line : headers.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    private RawHttp() {
    }

    /** Sends {@code GET path} with {@code headerLines} (each "Name: value", as raw bytes). */
    static Response get(int port, String path, List<byte[]> headerLines) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            for (byte[] line : headerLines) {
                out.write(line);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            }
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String raw = new String(readAll(socket.getInputStream()), StandardCharsets.UTF_8);
            int split = raw.indexOf("\r\n\r\n");
            String head = split < 0 ? raw : raw.substring(0, split);
            String body = split < 0 ? "" : raw.substring(split + 4);
            int status = Integer.parseInt(head.substring(9, 12));
            if (head.toLowerCase(Locale.ROOT).contains("transfer-encoding: chunked")) {
                body = dechunk(body);
            }
            return new Response(status, head, body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] header(String name, String value) {
        return (name + ": " + value).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        in.transferTo(buffer);
        return buffer.toByteArray();
    }

    private static String dechunk(String body) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < body.length()) {
            int eol = body.indexOf("\r\n", i);
            if (eol < 0) {
                break;
            }
            int size = Integer.parseInt(body.substring(i, eol).trim(), 16);
            if (size == 0) {
                break;
            }
            out.append(body, eol + 2, eol + 2 + size);
            i = eol + 2 + size + 2;
        }
        return out.toString();
    }
}
