package io.weir.controlplane.web;

import java.net.URI;
import org.springframework.http.ResponseEntity;
import tools.jackson.databind.json.JsonMapper;
import org.springframework.web.servlet.support.ServletUriComponentsBuilder;

/** The success responses every resource controller gives: 200 and 201, each with its ETag. */
public final class Responses {

    /** Writes what a tag digests: any stable serialisation of the representation does. */
    private static final JsonMapper DIGESTED = JsonMapper.builder().build();

    private Responses() {
    }

    /** 200 with {@code body}, tagged with its version. */
    public static <T extends Versioned> ResponseEntity<T> ok(T body) {
        return ResponseEntity.ok().eTag(ETags.of(body.version())).body(body);
    }

    /**
     * 200 with {@code body}, tagged with its version and a digest of it
     * ({@link ETags#of(long, byte[])}): for a representation with parts derived from other rows.
     */
    public static <T extends Versioned> ResponseEntity<T> okDerived(T body) {
        return ResponseEntity.ok().eTag(ETags.of(body.version(), DIGESTED.writeValueAsBytes(body))).body(body);
    }

    /** 201 with {@code body}, tagged with its version, {@code Location} set. */
    public static <T extends Versioned> ResponseEntity<T> created(URI location, T body) {
        return created(location, body.version()).body(body);
    }

    /**
     * 201 tagged with {@code version}, with {@code Location} set; the caller adds the body and any
     * other header, such as {@code Cache-Control: no-store} for a body that carries a secret.
     */
    public static ResponseEntity.BodyBuilder created(URI location, long version) {
        return ResponseEntity.created(location).eTag(ETags.of(version));
    }

    /** The URI of a new child of the collection the current request addressed: {@code <request>/{id}}. */
    public static URI childOfRequest(Object id) {
        return ServletUriComponentsBuilder.fromCurrentRequestUri().path("/{id}").buildAndExpand(id).toUri();
    }

    /** A URI under the application root, such as {@code /api/v1/volumes/{id}}. */
    public static URI underRoot(String template, Object id) {
        return ServletUriComponentsBuilder.fromCurrentContextPath().path(template).buildAndExpand(id).toUri();
    }
}
