package io.weir.controlplane.web;

/** A resource representation that carries its optimistic-lock version, the source of its ETag. */
public interface Versioned {

    long version();
}
