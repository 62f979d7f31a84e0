package io.weir.controlplane.web;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.IOException;

/** A request whose body stream fails once more than a set number of bytes has been read. */
final class LimitedBodyRequest extends HttpServletRequestWrapper {

    private final long maxBytes;
    private ServletInputStream stream;

    LimitedBodyRequest(HttpServletRequest request, long maxBytes) {
        super(request);
        this.maxBytes = maxBytes;
    }

    static boolean isLimitExceeded(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof BodyTooLargeException) {
                return true;
            }
        }
        return false;
    }

    @Override
    public ServletInputStream getInputStream() throws IOException {
        if (stream == null) {
            stream = new Counting(super.getInputStream(), maxBytes);
        }
        return stream;
    }

    static final class BodyTooLargeException extends IOException {
        BodyTooLargeException(long maxBytes) {
            super("request body exceeds " + maxBytes + " bytes");
        }
    }

    private static final class Counting extends ServletInputStream {
        private final ServletInputStream in;
        private final long maxBytes;
        private long count;

        Counting(ServletInputStream in, long maxBytes) {
            this.in = in;
            this.maxBytes = maxBytes;
        }

        private int counted(int n) throws IOException {
            if (n > 0 && (count += n) > maxBytes) {
                throw new BodyTooLargeException(maxBytes);
            }
            return n;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                counted(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return counted(in.read(b, off, len));
        }

        @Override
        public boolean isFinished() {
            return in.isFinished();
        }

        @Override
        public boolean isReady() {
            return in.isReady();
        }

        @Override
        public void setReadListener(ReadListener listener) {
            in.setReadListener(listener);
        }
    }
}
