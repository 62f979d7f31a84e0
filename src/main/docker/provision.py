"""One-shot provisioning of the compose cluster (docker-compose.yml, service `provision`).

Waits for the control plane, registers the data nodes, writes each node's token to
TOKEN_DIR/<node>.token (mode 0600, owned by TOKEN_OWNER, the image's user) where that node reads
it with --token-file, seeds tenants and volumes placed on the nodes, and writes a client
certificate of each tenant in CLIENT_CERTIFICATES to CLIENT_PKI_DIR/<tenant>/ as libnbd reads it
(ca-cert.pem, client-cert.pem, client-key.pem): the data nodes require NBD over TLS. Python's
standard library only. Idempotent: what exists is kept; a node whose token file is missing gets a
fresh node token (a node's first token is shown only once, in the create response), and a
tenant whose certificate files are missing gets a new certificate (its key, too, is shown once).
With every file written before and no admin token that works (the bootstrap token revoked, as
the docs advise), it ends with success without asking the control plane.

Environment:
  CONTROL_PLANE     base URL of a control-plane replica, e.g. https://controlplane-1:8080
  CONTROL_PLANE_CA  the cluster CA certificate (PEM) an https:// control plane is verified
                    against; empty: the system's trust store
  ADMIN_TOKEN       an admin token; when empty, read from ADMIN_TOKEN_FILE
  ADMIN_TOKEN_FILE  the control plane's generated admin token (its data/admin-token)
  TOKEN_DIR         where node tokens go
  TOKEN_OWNER       uid:gid of the node tokens
  NODES             "name=address ..." of the data nodes
  VOLUMES           "tenant/volume@node:sizeBytes ..." to create
  CLIENT_CERTIFICATES  "tenant ..." to write a client certificate of
  CLIENT_PKI_DIR    where the client certificates go
"""

import json
import os
import secrets
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

API = os.environ["CONTROL_PLANE"].rstrip("/") + "/api/v1"
READY = os.environ["CONTROL_PLANE"].rstrip("/") + "/actuator/health/readiness"
WAIT_SECONDS = 300
# Verified against the cluster CA (host name included), never unverified.
TLS = ssl.create_default_context(cafile=os.environ.get("CONTROL_PLANE_CA") or None)


def log(message):
    print("provision: " + message, flush=True)


def wait_until_ready():
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            with urllib.request.urlopen(READY, timeout=5, context=TLS) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError) as e:
            if time.monotonic() > deadline:
                sys.exit("provision: the control plane at %s is not ready after %d s: %s" % (READY, WAIT_SECONDS, e))
        time.sleep(2)


def done_before():
    """Whether an earlier run wrote every file this one would: each node's token, each client key."""
    nodes = [entry.split("=", 1)[0] for entry in os.environ["NODES"].split()]
    files = [os.path.join(os.environ["TOKEN_DIR"], node + ".token") for node in nodes]
    files += [os.path.join(os.environ["CLIENT_PKI_DIR"], tenant, "client-key.pem")
              for tenant in os.environ.get("CLIENT_CERTIFICATES", "").split()]
    return all(os.path.exists(f) for f in files)


def already_provisioned(why):
    """Ends the run with success: an earlier one did the work, and this one has no admin token that works
    (the operator revoked the bootstrap token, as the docs advise, which also deletes its file)."""
    log("already provisioned (every node token and client key exists); %s, so nothing was checked again" % why)
    sys.exit(0)


def admin_token():
    token = os.environ.get("ADMIN_TOKEN", "").strip()
    if token:
        return token
    path = os.environ["ADMIN_TOKEN_FILE"]
    if not os.path.exists(path) and done_before():
        already_provisioned("no admin token (ADMIN_TOKEN is empty and %s is gone)" % path)
    deadline = time.monotonic() + WAIT_SECONDS
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit("provision: no admin token: ADMIN_TOKEN is empty and %s does not exist" % path)
        time.sleep(1)
    with open(path) as f:
        return f.read().strip()


class Api:
    def __init__(self, token):
        self.token = token

    def call(self, method, path, body=None):
        """Returns (status, parsed body or None)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(API + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + self.token)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30, context=TLS) as response:
                text = response.read()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                return e.code, json.loads(text) if text else None
            except ValueError:
                return e.code, {"detail": text.decode(errors="replace")}

    def expect(self, method, path, body, *statuses):
        status, answer = self.call(method, path, body)
        if status not in statuses:
            sys.exit("provision: %s %s answered %d: %s" % (method, path, status, answer))
        return status, answer

    def find(self, path, name):
        """The item of a paginated list whose name is exactly `name` (name= filters by substring)."""
        _, page = self.expect("GET", path + ("&" if "?" in path else "?") + "name=" + urllib.parse.quote(name)
                              + "&size=100", None, 200)
        return next((item for item in page["items"] if item["name"] == name), None)


def write_token(node, token):
    directory = os.environ["TOKEN_DIR"]
    uid, gid = (int(part) for part in os.environ["TOKEN_OWNER"].split(":"))
    path = os.path.join(directory, node + ".token")
    temporary = path + ".tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as f:
        f.write(token + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.chown(temporary, uid, gid)
    os.rename(temporary, path)
    log("wrote %s" % path)


def provision_nodes(api):
    ids = {}
    for entry in os.environ["NODES"].split():
        name, address = entry.split("=", 1)
        token_file = os.path.join(os.environ["TOKEN_DIR"], name + ".token")
        status, node = api.expect("POST", "/nodes", {"name": name, "address": address}, 201, 409)
        if status == 201:
            log("registered data node %s (%s)" % (name, address))
            write_token(name, node["token"])
        else:
            node = api.find("/nodes", name)
            if node is None:
                sys.exit("provision: node %s exists but is not listed" % name)
            if not os.path.exists(token_file):
                _, issued = api.expect("POST", "/tokens", {"name": "%s-%s" % (name, secrets.token_hex(4)),
                                                           "role": "node", "nodeId": node["id"]}, 201)
                log("issued a new node token for %s" % name)
                write_token(name, issued["token"])
            else:
                log("data node %s and its token exist" % name)
        ids[name] = node["id"]
    return ids


def provision_volumes(api, node_ids):
    for entry in os.environ.get("VOLUMES", "").split():
        path, placement = entry.split("@", 1)
        tenant_name, volume_name = path.split("/", 1)
        node_name, size = placement.split(":", 1)
        status, tenant = api.expect("POST", "/tenants", {"name": tenant_name}, 201, 409)
        if status == 409:
            tenant = api.find("/tenants", tenant_name)
        status, _ = api.expect("POST", "/tenants/%s/volumes" % tenant["id"],
                               {"name": volume_name, "sizeBytes": int(size), "nodeIds": [node_ids[node_name]]},
                               201, 409)
        log("%s volume %s/%s on %s" % ("created" if status == 201 else "kept", tenant_name, volume_name, node_name))


def write_file(path, text, mode):
    temporary = path + ".tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.rename(temporary, path)


def provision_client_certificates(api):
    for tenant_name in os.environ.get("CLIENT_CERTIFICATES", "").split():
        directory = os.path.join(os.environ["CLIENT_PKI_DIR"], tenant_name)
        if os.path.exists(os.path.join(directory, "client-key.pem")):
            log("client certificate of %s exists" % tenant_name)
            continue
        tenant = api.find("/tenants", tenant_name)
        if tenant is None:
            sys.exit("provision: no tenant %s for a client certificate" % tenant_name)
        _, issued = api.expect("POST", "/tenants/%s/client-certificates" % tenant["id"],
                               {"name": "compose-" + secrets.token_hex(4)}, 201)
        os.makedirs(directory, exist_ok=True)
        write_file(os.path.join(directory, "ca-cert.pem"), issued["caCertificatePem"], 0o644)
        write_file(os.path.join(directory, "client-cert.pem"), issued["certificatePem"], 0o644)
        write_file(os.path.join(directory, "client-key.pem"), issued["privateKeyPem"], 0o600)
        log("wrote a client certificate of %s to %s" % (tenant_name, directory))


def main():
    wait_until_ready()
    api = Api(admin_token())
    if done_before() and api.call("GET", "/tenants?size=1")[0] == 401:
        already_provisioned("the admin token is refused (revoked)")
    node_ids = provision_nodes(api)
    provision_volumes(api, node_ids)
    provision_client_certificates(api)
    log("done")


if __name__ == "__main__":
    main()
