package io.weir.controlplane.token;

import io.weir.controlplane.security.Role;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.tags.Tag;
import io.weir.controlplane.web.PageResponse;
import io.weir.controlplane.web.Responses;
import io.weir.controlplane.web.Paging;
import jakarta.validation.Valid;
import java.util.UUID;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping(path = "/api/v1/tokens", produces = MediaType.APPLICATION_JSON_VALUE)
@Tag(name = "Tokens", description = "API bearer tokens (admin only). A token's secret is shown once, when it is created.")
class TokenController {

    private final TokenService service;

    TokenController(TokenService service) {
        this.service = service;
    }

    @PostMapping(consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Create a token", description = "The response's `token` is the secret; it is never shown again.")
    ResponseEntity<IssuedTokenResponse> createToken(@Valid @RequestBody TokenRequest request) {
        IssuedTokenResponse created = service.issue(request);
        return Responses.created(Responses.childOfRequest(created.id()), created.version())
                .cacheControl(CacheControl.noStore())
                .body(created);
    }

    @GetMapping
    @Operation(summary = "List tokens", description = "Pages of tokens in creation order, never with their secrets.")
    PageResponse<TokenResponse> listTokens(
            @Parameter(description = "Only tokens of this role") @RequestParam(required = false) Role role,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "" + Paging.DEFAULT_SIZE) int size) {
        return service.list(role, Paging.of(page, size));
    }

    @DeleteMapping(path = "/{tokenId}", produces = MediaType.ALL_VALUE)
    @Operation(summary = "Revoke a token", description = "Takes effect on the next request. The last unexpired admin token cannot be revoked (409).")
    ResponseEntity<Void> deleteToken(@PathVariable UUID tokenId,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        service.revoke(tokenId, ifMatch);
        return ResponseEntity.noContent().build();
    }
}
