package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TokenSecretsTest {

    @Test
    void generatedTokensNameTheirIdAndCarry256RandomBits() {
        UUID id = UUID.randomUUID();
        String token = TokenSecrets.generate(id);
        assertThat(token).startsWith("weir_").hasSize(5 + 32 + 1 + 43);
        assertThat(TokenSecrets.isWeirFormat(token)).isTrue();
        assertThat(TokenSecrets.idOf(token)).isEqualTo(id);
        Set<String> secrets = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            secrets.add(TokenSecrets.generate(id).substring(38));
        }
        assertThat(secrets).hasSize(1000);
    }

    @Test
    void verificationIsByHashOfTheWholeText() {
        String token = TokenSecrets.generate(UUID.randomUUID());
        byte[] stored = TokenSecrets.hash(token);
        assertThat(stored).hasSize(32);
        assertThat(TokenSecrets.matches(token, stored)).isTrue();
        assertThat(TokenSecrets.matches(token + "x", stored)).isFalse();
        char last = token.charAt(token.length() - 1);
        String lastCharChanged = token.substring(0, token.length() - 1) + (last == 'A' ? 'B' : 'A');
        assertThat(TokenSecrets.matches(lastCharChanged, stored)).isFalse();
    }

    /**
     * Changed behaviour: a chosen token's id used to be derived from (an unsalted hash of) its
     * text, which made every displayed id an offline guessing oracle. It has no derivable id now.
     */
    @Test
    void chosenTokensHaveNoIdDerivedFromTheirText() {
        String chosen = "an-operator-chosen-bootstrap-token-0123456789";
        assertThat(TokenSecrets.isWeirFormat(chosen)).isFalse();
        assertThatThrownBy(() -> TokenSecrets.idOf(chosen)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void onlyBearerTokenCharactersAreWellFormed() {
        assertThat(TokenSecrets.wellFormed("abc-._~+/==")).isTrue();
        assertThat(TokenSecrets.wellFormed("")).isFalse();
        assertThat(TokenSecrets.wellFormed("a b")).isFalse();
        assertThat(TokenSecrets.wellFormed("é")).isFalse();
        assertThat(TokenSecrets.wellFormed("a".repeat(TokenSecrets.MAX_LENGTH + 1))).isFalse();
    }
}
