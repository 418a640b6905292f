package io.spillway.routing.breaker;

import io.spillway.routing.breaker.Breaker.State;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** A listener that writes down what a breaker told it, for tests to read. Thread-safe. */
final class TransitionLog implements BreakerListener {
  /** One transition as told: the route, from, to. */
  record Told(String route, State from, State to) {}

  final List<Told> transitions = new CopyOnWriteArrayList<>();
  final AtomicInteger streaksStarted = new AtomicInteger();

  static TransitionLog on(Breaker breaker) {
    TransitionLog log = new TransitionLog();
    breaker.addListener(log);
    return log;
  }

  @Override
  public void onStreakStarted(String route) {
    streaksStarted.incrementAndGet();
  }

  @Override
  public void onTransition(String route, State from, State to, String reason) {
    transitions.add(new Told(route, from, to));
  }

  /** How many times {@code from → to} was told. */
  long count(State from, State to) {
    return transitions.stream().filter(t -> t.from() == from && t.to() == to).count();
  }
}
