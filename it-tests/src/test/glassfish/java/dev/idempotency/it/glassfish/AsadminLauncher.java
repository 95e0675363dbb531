package dev.idempotency.it.glassfish;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The Arquillian GlassFish container org.omnifaces.arquillian:arquillian-glassfish-server-managed:1.7 runs asadmin as
 * {@code java -jar glassfish/modules/admin-cli.jar ARGS} (its successors, ee.omnifish.arquillian 2.x, run
 * {@code bin/asadmin}, but do not resolve here). GlassFish 8 has no such jar: its asadmin needs a module path
 * and environment its {@code bin/asadmin} script sets up. The glassfish profile puts this class, as the Main-Class of a
 * jar of that name, in the unpacked server; it runs {@code glassfish/bin/asadmin ARGS} with the same streams and
 * returns its exit status. The script picks its java from AS_JAVA, which the profile sets (java21.home).
 */
public final class AsadminLauncher {

    private AsadminLauncher() {
    }

    public static void main(String[] args) throws Exception {
        // java -jar <glassfish>/modules/admin-cli.jar: the class path is that jar
        Path jar = Path.of(System.getProperty("java.class.path")).toAbsolutePath();
        Path asadmin = jar.getParent().getParent().resolve("bin").resolve("asadmin");
        List<String> command = new ArrayList<>();
        command.add("bash");
        command.add(asadmin.toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).inheritIO().start();
        System.exit(p.waitFor());
    }
}
