import dev.sealbox.client.SealboxClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Java example client: one command per call of the library, the same interface
 * as the other languages' examples.
 *
 * <pre>
 *   SEALBOX_TOKEN=... [SEALBOX_SERVER=127.0.0.1:50051] sealbox-example COMMAND --key KEY [--aad TEXT] IN OUT
 *
 *   seal, open                    one unary call (IN at most the unary limit, 1 MiB)
 *   seal-stream, open-stream      a file of any size through SealStream / OpenStream
 *   seal-envelope, open-envelope  an envelope file (encrypted here, data key from sealbox)
 * </pre>
 *
 * IN and OUT are paths ("-" for stdin and stdout with seal and open). Exit status 0
 * on success; 1 on error, with one line "sealbox-example: ExceptionClass: message"
 * on stderr; 2 on a usage error.
 */
public final class SealboxExample {
  private static final String PROG = "sealbox-example";

  private SealboxExample() {}

  /**
   * Runs one command.
   *
   * @param args COMMAND --key KEY [--aad TEXT] IN OUT
   */
  public static void main(String[] args) {
    String command = args.length > 0 ? args[0] : "";
    String key = null;
    String aad = "";
    String[] files = new String[2];
    int nfiles = 0;
    for (int i = 1; i < args.length; i++) {
      if (args[i].equals("--key") && i + 1 < args.length) {
        key = args[++i];
      } else if (args[i].equals("--aad") && i + 1 < args.length) {
        aad = args[++i];
      } else if (nfiles < 2 && (args[i].equals("-") || !args[i].startsWith("--"))) {
        files[nfiles++] = args[i];
      } else {
        usage("unexpected argument " + args[i]);
      }
    }
    if (key == null || nfiles != 2) {
      usage("need --key KEY, IN and OUT");
    }
    String token = System.getenv("SEALBOX_TOKEN");
    if (token == null || token.isEmpty()) {
      usage("set SEALBOX_TOKEN to a tenant token");
    }
    String server = System.getenv().getOrDefault("SEALBOX_SERVER", "127.0.0.1:50051");
    byte[] associatedData = aad.getBytes(StandardCharsets.UTF_8);
    Path in = Path.of(files[0]);
    Path out = Path.of(files[1]);

    try (SealboxClient client = SealboxClient.builder(server).token(token).build()) {
      switch (command) {
        case "seal" -> write(files[1],
            client.seal(key, read(files[0]), associatedData).ciphertext());
        case "open" -> write(files[1],
            client.open(key, read(files[0]), associatedData).plaintext());
        case "seal-stream" -> client.sealFile(key, associatedData, in, out, null);
        case "open-stream" -> client.openFile(key, associatedData, in, out, null);
        case "seal-envelope" -> client.sealEnvelopeFile(key, associatedData, in, out, null);
        case "open-envelope" -> client.openEnvelopeFile(key, associatedData, in, out, null);
        default -> usage("unknown command \"" + command + "\"");
      }
    } catch (Exception e) {
      System.err.println(PROG + ": " + e.getClass().getSimpleName() + ": " + e.getMessage());
      System.exit(1);
    }
  }

  private static byte[] read(String path) throws IOException {
    if (path.equals("-")) {
      return System.in.readAllBytes();
    }
    return Files.readAllBytes(Path.of(path));
  }

  private static void write(String path, byte[] data) throws IOException {
    if (path.equals("-")) {
      System.out.write(data);
      System.out.flush();
      return;
    }
    Files.write(Path.of(path), data);
  }

  private static void usage(String problem) {
    System.err.println(PROG + ": " + problem + "\nusage: " + PROG
        + " seal|open|seal-stream|open-stream|seal-envelope|open-envelope"
        + " --key KEY [--aad TEXT] IN OUT\n"
        + "  (SEALBOX_TOKEN: a tenant token; SEALBOX_SERVER: default 127.0.0.1:50051)");
    System.exit(2);
  }
}
