package io.weir.controlplane.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One HTTP/1.1 request over a plain socket, sent byte for byte as given: for what
 * {@code java.net.http} refuses or normalises (an encoded NUL or {@code ..} in a path, a
 * {@code TRACE}, oversized headers, header values with trailing blanks, raw non-UTF-8 bytes,
 * several {@code Authorization} headers). The server is asked to close the connection, and the
 * response is read to its end.
 */
public final class RawRequest {

    /** A response: status, raw header block and (de-chunked) body. */
    public record Response(int status, String headers, String body) {

        public String header(String name) {
            for (String line : headers.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }

        public String contentType() {
            return header("Content-Type");
        }

        @Override
        public String toString() {
            return status + " " + contentType() + " " + body;
        }
    }

    private static final byte[] CRLF = {'\r', '\n'};

    private RawRequest() {
    }

    /**
     * Sends {@code method target HTTP/1.1} with {@code headerLines} ("Name: value" each, as UTF-8)
     * and no body.
     */
    public static Response send(int port, String method, String target, String... headerLines) {
        return sendBytes(port, method, target, Arrays.stream(headerLines)
                .map(line -> line.getBytes(StandardCharsets.UTF_8))
                .toList());
    }

    /**
     * Sends {@code method target HTTP/1.1} with {@code headerLines} ("Name: value" each) as the
     * bytes given, in any encoding or none, and no body.
     */
    public static Response sendBytes(int port, String method, String target, List<byte[]> headerLines) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write((method + ' ' + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n")
                    .getBytes(StandardCharsets.UTF_8));
            for (byte[] line : headerLines) {
                out.write(line);
                out.write(CRLF);
            }
            out.write(CRLF);
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

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        for (int n; (n = in.read(chunk)) > 0; ) {
            buffer.write(chunk, 0, n);
        }
        return buffer.toByteArray();
    }

    private static String dechunk(String body) {
        StringBuilder out = new StringBuilder();
        int at = 0;
        while (at < body.length()) {
            int eol = body.indexOf("\r\n", at);
            if (eol < 0) {
                break;
            }
            int size = Integer.parseInt(body.substring(at, eol).trim().split(";")[0], 16);
            if (size == 0) {
                break;
            }
            out.append(body, eol + 2, Math.min(body.length(), eol + 2 + size));
            at = eol + 2 + size + 2;
        }
        return out.toString();
    }
}
