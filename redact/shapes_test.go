package redact

import (
	"strings"
	"testing"
)

// hex40 and friends are fake key material, split so that no scanner sees a
// whole key in the source.
var (
	hex32 = j("9f86d081884c7d65", "9a2feaa0c55ad015")
	hex40 = j("3c7b1e2f9a8d6c5b4a39", "2817f6e5d4c3b2a19087")
	hex64 = j("a3f1c9e87b6d5a4f3e2d1c0b9a8f7e6d", "5c4b3a29180f7e6d5c4b3a2918a7b6c5")
	b64   = j("Zk3qT9vX2mLp8RwN4sYb6HcJ1dGf5KaE", "7uIo0PzQxCvBnM3lKjHgFdSaWeRtYuIoPl", "kJhGfDsA9qWeRtYuIoPlKjHgFdSaZx0==")
)

// moreSecretCases are the shapes beyond the first thirty: cloud, CI,
// database, payment and chat credentials, and passwords given in words.
func moreSecretCases() []secretCase {
	sendgrid := j("SG.", "ngeVfQFYQlKU0ufo8x5d1A", ".", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr")
	doPAT := j("dop_", "v1_", hex64)
	doOAuth := j("doo_", "v1_", hex64)
	azureKey := b64[:86] + "=="
	sbKey := j("Xk2mN9pQ4rS8tU1vW6xY3zA5", "bC0dEfG7hJ2kL9m=")
	sasSig := j("h8kN2mQ4pR6sT8vX0zB2dF4", "hJ6lN8pR0tV2xZ4%2Bb6D8%3D")
	twilioSK := j("SK", hex32)
	twilioAC := j("AC", hex32[:16], "0a1b2c3d4e5f6a7b")
	mailgun := j("key-", hex32)
	pypi := j("pypi-", "AgEIcHlwaS5vcmcCJGE4ZjQ3ZDY1LTkxYjYtNDc3Yi05NzM2", "LWVhY2JlZTE4YWI1NgACKlszLCJiOTY0ZDA3Ni04")
	heroku := j("HRKU-", "AAx8Yj2mQ9pL4rT7vW1zB5nC3kD6fG0hJ_", "aSdFgHjK")
	herokuUUID := j("5d41402a", "-bc4b-2a76-b971-9d911017c592")
	shopify := j("shpat_", hex32)
	squareATP := j("sq0atp-", "4xKf9Q2mLp7RwN3sYb8HcA")
	squareEAAA := j("EAAA", "l9Kx3mQ7pR2sT5vX8zB1dF4hJ6lN9pR2tV5xZ8bD1fH4jL7nP0rT3vX6zB9dF2hJ5", "lN8pR1t")
	braintree := j("access_token$", "production$", "x7k2m9q4p8r3s6t1$", hex32)
	vault := j("hvs.", "CAESIJlWh3kQ9mXp2Lr8Tz5Vb7Nc4Yd1Fg6Hj0Ka", "GiEKHGh2cy5tT3ZpRXlXQ2RmR3hZ")
	tfc := j("xK9mQ2pL7rT4vW", ".atlasv1.", "z8B3nC6kD1fG5hJ0aSdFgHjKlQwErTyUiOpZxCvBnM1234567890abcdefGHIJklmn")
	docker := j("dckr_pat_", "2YotnFZFEjr1zCsicMWpAAbc3DeF")
	circle := j("CCIPAT_", "4xKf9Q2mLp7RwN3sYb8HcA_", hex40)
	glcbt := j("glcbt-", "64_", "xY7zK2mN9pQ4rS8tU1vW")
	glrt := j("glrt-", "t3_", "Qw7eR2tY9uI4oP8aS1dF")
	grafana := j("glsa_", "pL7rT4vWz8B3nC6kD1fG5hJ0aSdFgHjK", "_", "1a2b3c4d")
	datadogAPI := hex32
	datadogApp := hex40
	sentryKey := j("e3b0c44298fc1c14", "9afbf4c8996fb924")
	sentryOrg := j("sntrys_", "eyJpYXQiOjE3MTAwMDAwMDAuMCwidXJsIjoiaHR0cHM6Ly9zZW50cnkuaW8i", "fQ_Xk2mN9pQ4rS8tU1vW6xY3zA5bC0dEfG7hJ2kL9m")
	tgSecret := j("AA", "Hdqx7mPz3KL9rT2vWq5YbN8cJ4sF6gH1kD")
	discord := j("MTk4NjIyNDgzNDcxOTI1MjQ4", ".", "Cl2FMQ", ".", "ZnCjm1XVW7vRze4b7Cq4se7kKWs")
	discordHook := j("discord.com/api/webhooks/", "1187654321098765432", "/", "Qw7eR2tY9uI4oP8aS1dF6gH3jK5lZ0xCvB7nM2qW9eR4tY8uI1oP6aS3dF0gH")
	visa := j("4111", " 1111 ", "1111 1111")
	mastercard := j("5555", "5555", "5555", "4444")
	amex := j("3782", "-822463-", "10005")
	discover := j("6011", "0009", "9013", "9424")
	age := j("AGE-SECRET-KEY-", "1QQ8ZQZJ9X5Y7K6RHG2CTN0LPS4VF3WMD8E9A2B7UKXQZRJMN5T4YH")
	postman := j("PMAK-", "6543210fedcba9876543210f", "-", "0123456789abcdef0123456789abcdef01")
	linear := j("lin_api_", "Xk2mN9pQ4rS8tU1vW6xY3zA5bC0dEfG7hJ2kL9mQ")
	newrelic := j("NRAK-", "7XK2MN9PQ4RS8TU1VW6XY3ZA5BC")
	supabase := j("sbp_", hex40)
	databricks := j("dapi", hex32)
	doppler := j("dp.pt.", "Xk2mN9pQ4rS8tU1vW6xY3zA5bC0dEfG7hJ2kL9mQ4rS")
	pulumi := j("pul-", hex40)
	whsec := j("whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	ghs := j("ghs_", "16C7e42F292c6912E7710c838347Ae178B4a")
	glpat := j("glpat-", "Zx9Cv8Bn7Mq6We5Rt4Yu")
	mongoPass := j("Mq6We5", "Rt4Yu")
	redisPass := j("r3d1s", "-S3cret")
	mysqlPass := j("my5ql", "Pass")
	basicPass := j("ci-b0t", "-pw")
	wordsPass := j("hunter", "2")
	wifiPass := j("Tr0ub4dor", "!x")
	zhPass := j("hunter", "2024")
	zhPass2 := j("Xk9#mP", "2q")
	passwd := j("9mQ4rS", "8tU1v")
	secretAssign := j("a8F3kL9q", "Z2xW7vB1")
	return []secretCase{
		{"sendgrid key", "SENDGRID_API_KEY=" + sendgrid + " # mail", []string{sendgrid, "TwL2iGABf9DHoTf"}, KindSendGridKey, []string{" # mail"}},
		{"digitalocean token", "doctl auth init -t " + doPAT, []string{doPAT, hex64}, KindDigitalOcean, []string{"doctl auth init -t "}},
		{"digitalocean oauth token", "the droplet script used " + doOAuth + " yesterday", []string{hex64}, KindDigitalOcean, []string{" yesterday"}},
		{"azure storage connection string", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + azureKey + ";EndpointSuffix=core.windows.net", []string{azureKey, azureKey[:40]}, KindAzureKey, []string{"AccountName=acme;AccountKey=", ";EndpointSuffix=core.windows.net"}},
		{"azure service bus key", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + sbKey, []string{sbKey}, KindAzureKey, []string{"SharedAccessKeyName=RootManageSharedAccessKey;"}},
		{"azure sas url", "download https://acme.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=" + sasSig + " now", []string{sasSig, "h8kN2mQ4pR6sT8vX0zB2dF4"}, KindAzureSAS, []string{"&sig=", " now"}},
		{"gcp private key id", `{"type": "service_account", "project_id": "acme-prod", "private_key_id": "` + hex40 + `", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}`, []string{hex40}, KindGCPKeyID, []string{`"project_id": "acme-prod"`, `"client_email"`}},
		{"gcp service account private key", `{"private_key_id": "` + hex40 + `", "private_key": "` + j("-----BEGIN ", "PRIVATE KEY-----") + `\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n` + j("-----END ", "PRIVATE KEY-----") + `\n"}`, []string{hex40, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"}, KindPrivateKey, []string{`"private_key": "`}},
		{"password in words", "btw my password is " + wordsPass + ". Don't tell anyone", []string{wordsPass}, KindPassword, []string{"my password is ", ". Don't tell anyone"}},
		{"password in a longer sentence", "The wifi password for the office is " + wifiPass + ", ask Bob for the guest one.", []string{wifiPass}, KindPassword, []string{"The wifi password for the office is ", ", ask Bob"}},
		{"password in chinese", "我的密码是" + zhPass + "，别告诉别人", []string{zhPass}, KindPassword, []string{"我的密码是", "，别告诉别人"}},
		{"password in chinese with colon", "数据库密码：" + zhPass2 + " 请保管好", []string{zhPass2}, KindPassword, []string{"数据库密码：", " 请保管好"}},
		{"passwd yaml", "db:\n  user: app\n  passwd: " + passwd + "\n", []string{passwd}, KindPassword, []string{"user: app", "passwd: "}},
		{"secret assignment", "APP_SECRET=" + secretAssign + " ./run", []string{secretAssign}, KindGenericSecret, []string{"APP_SECRET=", " ./run"}},
		{"twilio api key", "TWILIO_API_KEY_SID " + twilioSK + " is used by the notifier", []string{twilioSK}, KindTwilioKey, []string{" is used by the notifier"}},
		{"twilio account sid", "twilio account " + twilioAC + " sends the SMS", []string{twilioAC}, KindTwilioSID, []string{" sends the SMS"}},
		{"mailgun key", "curl -s --user 'api:" + mailgun + "' https://api.mailgun.net/v3/x", []string{mailgun}, KindMailgunKey, []string{"https://api.mailgun.net/v3/x"}},
		{"pypi token", "twine upload -u __token__ -p " + pypi + " dist/*", []string{pypi}, KindPyPIToken, []string{" dist/*"}},
		{"heroku token", "heroku auth:token printed " + heroku, []string{heroku}, KindHerokuKey, []string{"heroku auth:token printed "}},
		{"heroku api key", "HEROKU_API_KEY=" + herokuUUID, []string{herokuUUID}, KindGenericSecret, []string{"HEROKU_API_KEY="}},
		{"shopify token", "X-Shopify-Access-Token: " + shopify, []string{shopify}, KindShopifyToken, nil},
		{"square access token", "SQUARE_TOKEN " + squareATP + " for the sandbox", []string{squareATP}, KindSquareToken, []string{" for the sandbox"}},
		{"square eaaa token", "square says: " + squareEAAA, []string{squareEAAA}, KindSquareToken, []string{"square says: "}},
		{"braintree paypal token", "braintree gateway = " + braintree, []string{braintree, hex32}, KindBraintreeToken, []string{"braintree gateway = "}},
		{"vault token", "export VAULT_TOKEN " + vault, []string{vault}, KindVaultToken, nil},
		{"terraform cloud token", `credentials "app.terraform.io" { token = "` + tfc + `" }`, []string{tfc, "z8B3nC6kD1fG5hJ0aSdFgHjKl"}, KindTerraformToken, []string{`credentials "app.terraform.io"`}},
		{"docker hub token", "docker login -u acme -p " + docker, []string{docker}, KindDockerToken, []string{"docker login -u acme -p "}},
		{"circleci token", "Circle-Token: " + circle, []string{circle, hex40}, KindCircleCIToken, nil},
		{"gitlab ci job token", "CI_JOB_TOKEN " + glcbt + " expires with the job", []string{glcbt}, KindGitLabToken, []string{" expires with the job"}},
		{"gitlab runner token", "gitlab-runner register --token " + glrt, []string{glrt}, KindGitLabToken, []string{"gitlab-runner register --token "}},
		{"gitlab personal token in url", "git remote add origin https://oauth2:" + glpat + "@gitlab.com/acme/app.git", []string{glpat}, KindURLPassword, []string{"@gitlab.com/acme/app.git"}},
		{"grafana service account token", "GF token " + grafana, []string{grafana}, KindGrafanaToken, nil},
		{"datadog api key", "DD_API_KEY=" + datadogAPI + " DD_SITE=datadoghq.eu", []string{datadogAPI}, KindGenericSecret, []string{"DD_SITE=datadoghq.eu"}},
		{"datadog app key", "DD_APP_KEY: " + datadogApp, []string{datadogApp}, KindGenericSecret, []string{"DD_APP_KEY: "}},
		{"sentry dsn", "SENTRY_DSN=https://" + sentryKey + "@o450123.ingest.sentry.io/5501234", []string{sentryKey}, KindURLKey, []string{"@o450123.ingest.sentry.io/5501234"}},
		{"sentry auth token", "SENTRY_AUTH_TOKEN " + sentryOrg, []string{sentryOrg}, KindSentryToken, nil},
		{"telegram bot token", "bot = Bot('5678901234:" + tgSecret + "')", []string{tgSecret}, KindTelegramToken, []string{"bot = Bot('5678901234:"}},
		{"discord bot token", "client.login('" + discord + "')", []string{discord, "ZnCjm1XVW7vRze4b7Cq4se7kKWs"}, KindDiscordToken, []string{"client.login('"}},
		{"discord webhook", "post to https://" + discordHook + " on deploy", []string{"Qw7eR2tY9uI4oP8aS1dF6gH3jK5lZ0xCvB7nM2qW9eR4tY8uI1oP6aS3dF0gH"}, KindDiscordWebhook, []string{" on deploy"}},
		{"visa card", "Charge my card " + visa + ", exp 12/29, cvc 123", []string{visa, "1111 1111 1111"}, KindCardNumber, []string{"Charge my card ", ", exp 12/29"}},
		{"mastercard", "card_number=" + mastercard, []string{mastercard}, KindCardNumber, []string{"card_number="}},
		{"amex card", "Amex " + amex + " on file", []string{amex}, KindCardNumber, []string{"Amex ", " on file"}},
		{"discover card", "pay with " + discover + ".", []string{discover}, KindCardNumber, []string{"pay with ", "."}},
		{"stripe webhook secret", "STRIPE_WEBHOOK_SECRET " + whsec, []string{whsec}, KindStripeKey, nil},
		{"github app token", "installation token " + ghs, []string{ghs}, KindGitHubToken, []string{"installation token "}},
		{"mongodb srv url", "MONGO_URL=mongodb+srv://admin:" + mongoPass + "@cluster0.ab1cd.mongodb.net/app?retryWrites=true", []string{mongoPass}, KindURLPassword, []string{"mongodb+srv://admin:", "@cluster0.ab1cd.mongodb.net/app"}},
		{"redis url without user", "REDIS_URL=redis://:" + redisPass + "@cache.internal:6379/0", []string{redisPass}, KindURLPassword, []string{"redis://:", "@cache.internal:6379/0"}},
		{"mysql url", "mysql://root:" + mysqlPass + "@127.0.0.1:3306/shop", []string{mysqlPass}, KindURLPassword, []string{"mysql://root:", "@127.0.0.1:3306/shop"}},
		{"basic auth url", "Jenkins is at https://ci:" + basicPass + "@jenkins.acme.dev/job/x", []string{basicPass}, KindURLPassword, []string{"@jenkins.acme.dev/job/x"}},
		{"age secret key", "# created: 2026-01-01\n" + age, []string{age}, KindAgeKey, []string{"# created: 2026-01-01\n"}},
		{"postman key", "POSTMAN " + postman, []string{postman}, KindPostmanKey, nil},
		{"linear key", "LINEAR " + linear, []string{linear}, KindLinearKey, nil},
		{"new relic key", "NEW_RELIC " + newrelic, []string{newrelic}, KindNewRelicKey, nil},
		{"supabase token", "supabase login --token " + supabase, []string{supabase}, KindSupabaseToken, nil},
		{"databricks token", "databricks configure --token " + databricks, []string{databricks}, KindDatabricksToken, nil},
		{"doppler token", "DOPPLER " + doppler, []string{doppler}, KindDopplerToken, nil},
		{"pulumi token", "pulumi login with " + pulumi, []string{pulumi}, KindPulumiToken, nil},
	}
}

// TestStringLeavesNearMissesAlone lists text that looks like the new shapes
// but holds no secret.
func TestStringLeavesNearMissesAlone(t *testing.T) {
	t.Parallel()
	texts := []string{
		"SG.com and the SG. prefix of SendGrid keys",
		"do_v1_test and dop_v1_short are not tokens",
		"AccountKey=$AZURE_STORAGE_KEY is read from the environment",
		"sig=abc is too short to be a signature",
		"private_key_id is the field name; private_key_path = ./keys/dev.pem",
		"the password is incorrect, try again",
		"The password is case-sensitive and the password is Required.",
		"my password is in 1Password",
		"the reset password link is https://example.com/reset",
		"密码学是一门科学。忘记密码了怎么办？密码是多少？",
		"SKU-1234, AC/DC, ACME Corp and the SKIP list",
		"global glance glad gl-matrix glsa glc",
		"hvac service and hvs.short",
		"key-value stores and monkey-patching; key-0123",
		"order 4111111111111112 and invoice 5555 5555 5555 4445 failed the check",
		"epoch ms 1735689600000, pi 3.1415926535897932, phone +1 415 555 0132",
		"ISBN 978-0-306-40615-7 and tracking 1Z999AA10123456784",
		"card ending in 4242, expires 04/28",
		"chat 123456789:AAbb is short",
		"NOTE: ODD OTHER MTA NTP OD.x",
		"pull-request pul-123 dapi sbp_ CCIP NRAK dp.pt.config",
		"request id 123e4567-e89b-12d3-a456-426614174000 is fine",
		"commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 on main",
		"app_key_path=./app.key and application_key=${DD_APP_KEY}",
	}
	for _, s := range texts {
		if got, n := Count(s); got != s || n != 0 {
			t.Errorf("Count(%q) = %q, %d; want it unchanged", s, got, n)
		}
	}
}

// TestShapeCount keeps the corpus at the size the security requirement asks
// for: at least forty distinct shapes.
func TestShapeCount(t *testing.T) {
	t.Parallel()
	kinds := map[string]bool{}
	for _, tc := range secretCases() {
		kinds[tc.kind] = true
	}
	if n := len(secretCases()); n < 40 {
		t.Errorf("%d secret shapes, want at least 40", n)
	}
	if len(kinds) < 40 {
		t.Errorf("%d kinds of secret, want at least 40", len(kinds))
	}
	if !strings.Contains(String("x"), "x") {
		t.Fatal("String lost text")
	}
}
