package io.spillway.server.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs Netty's leak detector at PARANOID for every test class and fails the class when any buffer
 * leaked. Registered automatically for all tests through JUnit's extension auto-detection.
 */
public final class NettyLeakCheck implements BeforeAllCallback, AfterAllCallback {
  private static final List<String> LEAKS = new CopyOnWriteArrayList<>();

  static {
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    LEAKS.clear();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    for (int i = 0; i < 3; i++) {
      System.gc();
      for (int j = 0; j < 64; j++) {
        ByteBuf probe = PooledByteBufAllocator.DEFAULT.buffer(16);
        probe.release();
      }
    }
    if (!LEAKS.isEmpty()) {
      String report = String.join("\n\n", LEAKS);
      LEAKS.clear();
      throw new AssertionError("Netty buffers leaked in " + context.getDisplayName() + ":\n" + report);
    }
  }

  private static final class RecordingFactory extends ResourceLeakDetectorFactory {
    @Override
    public <T> ResourceLeakDetector<T> newResourceLeakDetector(
        Class<T> resource, int samplingInterval, long maxActive) {
      return new ResourceLeakDetector<>(resource, samplingInterval) {
        @Override
        protected void reportTracedLeak(String resourceType, String records) {
          LEAKS.add(resourceType + " leaked:" + records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
          LEAKS.add(resourceType + " leaked (untraced)");
        }
      };
    }
  }
}
