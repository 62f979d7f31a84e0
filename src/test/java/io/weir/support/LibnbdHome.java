package io.weir.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A home for a libnbd program (fio's nbd engine) with a tenant's client certificate in it. fio
 * takes no certificate path in its URI: libnbd reads {@code $HOME/.pki/libnbd} for a user and
 * {@code /etc/pki/libnbd} for root. So a test runs fio as users run it, as a user with a home of
 * its own: as {@code nobody} (through {@code setpriv}, which Debian has) when the test runs as
 * root, else as the test's own user.
 */
public final class LibnbdHome {

    /** The files of a libnbd certificate directory. */
    public static final List<String> FILES = List.of("ca-cert.pem", "client-cert.pem", "client-key.pem");

    private LibnbdHome() {
    }

    /**
     * Copies the certificate directory {@code certificates} to {@code home/.pki/libnbd} and
     * returns the command prefix that runs a program with that home, as a user.
     */
    public static List<String> prefix(Path home, Path certificates) throws IOException {
        Path pki = Files.createDirectories(home.resolve(".pki").resolve("libnbd"));
        for (String f : FILES) {
            Files.copy(certificates.resolve(f), pki.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        List<String> command = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name"))) {
            UserPrincipal nobody = home.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
            for (Path p : List.of(home, home.resolve(".pki"), pki)) {
                Files.setOwner(p, nobody);
            }
            for (String f : FILES) {
                Files.setOwner(pki.resolve(f), nobody);
            }
            // nobody must be able to reach its home: temporary directories are private to root
            for (Path d = home.toAbsolutePath().getParent(); d != null; d = d.getParent()) {
                Set<PosixFilePermission> mode = Files.getPosixFilePermissions(d);
                if (mode.add(PosixFilePermission.OTHERS_EXECUTE)) {
                    Files.setPosixFilePermissions(d, mode);
                }
            }
            command.addAll(List.of("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"));
        }
        command.addAll(List.of("env", "HOME=" + home));
        return command;
    }
}
