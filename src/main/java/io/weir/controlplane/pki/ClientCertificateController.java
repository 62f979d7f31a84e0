package io.weir.controlplane.pki;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import io.weir.controlplane.web.PageResponse;
import io.weir.controlplane.web.Paging;
import io.weir.controlplane.web.Responses;
import jakarta.validation.Valid;
import java.util.UUID;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping(path = "/api/v1/tenants/{tenantId}/client-certificates", produces = MediaType.APPLICATION_JSON_VALUE)
@Tag(name = "Client certificates", description = "A tenant's X.509 client certificates for NBD over TLS, issued by the "
        + "cluster CA. A key the control plane makes is shown once, when it is created.")
class ClientCertificateController {

    private final ClientCertificateService service;

    ClientCertificateController(ClientCertificateService service) {
        this.service = service;
    }

    @PostMapping(consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Issue a client certificate", description = "With `csr`, certifies that request's key; without, "
            + "makes a key and returns it as `privateKeyPem`, never again. The certificate reaches every data node that "
            + "serves the tenant in its desired config. A tenant keeps at most 1000 certificates that have not expired, "
            + "revoked ones included: 409 beyond.")
    ResponseEntity<IssuedClientCertificateResponse> createClientCertificate(@PathVariable UUID tenantId,
            @Valid @RequestBody ClientCertificateRequest request) {
        IssuedClientCertificateResponse issued = service.issue(tenantId, request);
        return ResponseEntity.created(Responses.childOfRequest(issued.id())).cacheControl(CacheControl.noStore()).body(issued);
    }

    @GetMapping
    @Operation(summary = "List a tenant's client certificates", description = "Pages in creation order, revoked ones "
            + "included (with `revokedAt`); never with a key.")
    PageResponse<ClientCertificateResponse> listClientCertificates(@PathVariable UUID tenantId,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "" + Paging.DEFAULT_SIZE) int size) {
        return service.list(tenantId, Paging.of(page, size));
    }

    @DeleteMapping(path = "/{certificateId}", produces = MediaType.ALL_VALUE)
    @Operation(summary = "Revoke a client certificate", description = "The desired config of every data node serving "
            + "the tenant lists it as revoked from the next push on, and its connections close. Revoking a revoked "
            + "certificate changes nothing.")
    ResponseEntity<Void> revokeClientCertificate(@PathVariable UUID tenantId, @PathVariable UUID certificateId) {
        service.revoke(tenantId, certificateId);
        return ResponseEntity.noContent().build();
    }
}
