package dev.sealbox.client;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * When to renew the token (docs/CLIENTS.md, "Token renewal"): once less than a third
 * of its life is left, or at the first call when its expiry is not known (the answer
 * tells it). Its life is measured from when this client learnt the expiry (built, or
 * renewed) to the expiry. A renewal that fails is tried again at the next call, except
 * FAILED_PRECONDITION (a token that cannot renew), after which it stops trying.
 */
final class TokenRenewal {
  private static final Logger LOG = Logger.getLogger(TokenRenewal.class.getName());

  private final Consumer<RenewedToken> onRenewed;
  private Instant expiry;
  private Instant learnt;
  private boolean stopped;

  TokenRenewal(Instant expiry, Consumer<RenewedToken> onRenewed) {
    this.expiry = expiry;
    this.learnt = Instant.now();
    this.onRenewed = onRenewed;
  }

  /** Before a call: renews (with renew, which switches the token) if it is time. */
  synchronized void beforeCall(Supplier<RenewedToken> renew) {
    if (stopped || !due(Instant.now())) {
      return;
    }
    try {
      renew.get();
    } catch (FailedPreconditionException e) {
      stopped = true;
      LOG.log(Level.WARNING, "sealbox: the token cannot be renewed; renewal stopped", e);
    } catch (SealboxException e) {
      LOG.log(Level.WARNING, "sealbox: token renewal failed; trying again at the next call", e);
    }
  }

  private boolean due(Instant now) {
    if (expiry == null) {
      return true;
    }
    Duration life = Duration.between(learnt, expiry);
    return !now.isBefore(expiry.minus(life.dividedBy(3)));
  }

  /** After any successful RenewToken (automatic or asked for). */
  void renewed(RenewedToken token) {
    synchronized (this) {
      expiry = token.expireTime();
      learnt = Instant.now();
    }
    if (onRenewed != null) {
      onRenewed.accept(token);
    }
  }
}
