package io.asyncjobs.auth;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.common.MapBackedConfigSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Dev mode and tests: when {@code jobs.auth.dev-keys-dir} is set, makes sure an RSA key pair exists
 * there and points token verification (and token signing, for the printed dev token and the tests)
 * at it. Production never sets the property and configures {@code mp.jwt.verify.publickey.location}
 * itself.
 */
public class DevKeysConfigSourceFactory implements ConfigSourceFactory {

  /** The issuer of every token signed with the dev keys. */
  public static final String DEV_ISSUER = "async-jobs-dev";

  /** Same place as the embedded database's source: the environment still wins. */
  private static final int ORDINAL = 275;

  @Override
  public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
    ConfigValue dir = context.getValue("jobs.auth.dev-keys-dir");
    if (dir == null || dir.getValue() == null || dir.getValue().isBlank()) {
      return List.of();
    }
    Path folder = Path.of(dir.getValue()).toAbsolutePath().normalize();
    Path publicKey = folder.resolve("public.pem");
    Path privateKey = folder.resolve("private.pem");
    ensureKeyPair(publicKey, privateKey);
    return List.of(
        new MapBackedConfigSource(
            "dev token keys",
            Map.of(
                "mp.jwt.verify.publickey.location",
                publicKey.toString(),
                "mp.jwt.verify.issuer",
                DEV_ISSUER,
                "smallrye.jwt.sign.key.location",
                privateKey.toString(),
                "smallrye.jwt.new-token.issuer",
                DEV_ISSUER),
            ORDINAL) {});
  }

  private static synchronized void ensureKeyPair(Path publicKey, Path privateKey) {
    if (Files.isRegularFile(publicKey) && Files.isRegularFile(privateKey)) {
      return;
    }
    try {
      Files.createDirectories(publicKey.getParent());
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(2048);
      KeyPair pair = generator.generateKeyPair();
      Files.writeString(privateKey, pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
      Files.writeString(publicKey, pem("PUBLIC KEY", pair.getPublic().getEncoded()));
    } catch (IOException e) {
      throw new UncheckedIOException("jobs.auth.dev-keys-dir: cannot write " + publicKey, e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot make an RSA key pair", e);
    }
  }

  private static String pem(String type, byte[] der) {
    String body = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }
}
